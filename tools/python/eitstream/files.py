"""Readers for eitstream's HDF5 recordings (docs/formats.md): image files ("eitstream-images") and
raw-frame files ("eitstream-frames"). Both may be read while eitstream is still writing them
(SWMR): ImageFile.refresh() picks up new rows."""
import h5py
import numpy as np

_COLUMNS = ("seq", "t_acquired_ns", "t_published_ns", "flags", "dropped_before")


def geometry_of(group):
    """The /geometry group as a dict: kind 'grid' (nx, ny, x0, y0, dx, dy, mask; a voxel grid
    also nz, z0, dz, its mask [nz, ny, nx]) or 'mesh' (nodes, elements, electrode_nodes,
    output_on)."""
    g = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in group.attrs.items()}
    for name in ("mask", "nodes", "elements", "electrode_nodes"):
        if name in group:
            g[name] = group[name][()]
    for k in ("nx", "ny", "nz"):
        if k in g:
            g[k] = int(g[k])
    return g


class ImageFile:
    """An open eitstream image or raw-frame file. `data` is the (n, width) dataset (images or
    frames); the per-frame columns are numpy arrays of the rows visible when opened/refreshed."""

    def __init__(self, path, swmr=True):
        self.path = str(path)
        try:
            self.file = h5py.File(self.path, "r", libver="latest", swmr=swmr)
        except OSError:  # a file not written in SWMR mode
            self.file = h5py.File(self.path, "r")
        self.attrs = {k: (v.decode() if isinstance(v, bytes) else v)
                      for k, v in self.file.attrs.items()}
        fmt = self.attrs.get("format")
        if fmt not in ("eitstream-images", "eitstream-frames"):
            raise ValueError(f"{self.path}: format attribute is {fmt!r}, expected "
                             "eitstream-images or eitstream-frames")
        self.kind = "images" if fmt == "eitstream-images" else "frames"
        self.dataset = self.file[self.kind]
        self._columns = {c: self.file[c] for c in _COLUMNS}
        self.geometry = geometry_of(self.file["geometry"]) if "geometry" in self.file else None
        # Complex frames or images: each row holds (re, im) float pairs (attribute complex =
        # "interleaved"); read(as_complex=True) and complex_v_ref() give them as complex numbers.
        self.complex = self.attrs.get("complex") == "interleaved"
        self.v_ref = self.file["v_ref"][()] if "v_ref" in self.file else None

    def refresh(self):
        """Rows written since the last look (SWMR); returns the row count now visible."""
        # Columns first: eitstream flushes them before the data, so every visible row has them.
        for d in list(self._columns.values()) + [self.dataset]:
            if self.file.swmr_mode:
                d.refresh()
        return len(self)

    def __len__(self):
        return int(self.dataset.shape[0])

    def column(self, name, rows=None):
        n = len(self) if rows is None else rows
        return self._columns[name][:n]

    def read(self, start=0, stop=None, as_images=True, as_complex=False):
        """Rows [start, stop) as float32; image files on a grid come back as (n, ny, nx), on a
        voxel grid as (n, nz, ny, nx), with NaN outside the body when as_images is true. A complex file read with as_complex comes
        back as complex64 (n, width / 2): each (re, im) pair one number."""
        stop = len(self) if stop is None else min(stop, len(self))
        data = self.dataset[start:stop]
        if as_complex:
            if not self.complex:
                raise ValueError(f"{self.path}: real values (no complex = interleaved attribute)")
            return np.ascontiguousarray(data).view(np.complex64)
        g = self.geometry
        if self.kind == "images" and as_images and g and g.get("kind") == "grid":
            shape = (g["ny"], g["nx"]) if g.get("nz", 1) <= 1 else (g["nz"], g["ny"], g["nx"])
            data = data.reshape(-1, *shape).astype(np.float32, copy=True)
            data[:, np.asarray(g["mask"]).reshape(shape) == 1] = np.nan
        return data

    def close(self):
        self.file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _read_all(path, kind, as_images, as_complex=False):
    with ImageFile(path) as f:
        if f.kind != kind:
            raise ValueError(f"{path}: an eitstream {f.kind} file, expected {kind}")
        n = len(f)
        v_ref = f.v_ref
        if as_complex and v_ref is not None:
            v_ref = np.ascontiguousarray(v_ref).view(np.complex128)
        out = {"data": f.read(0, n, as_images=as_images, as_complex=as_complex),
               "attrs": f.attrs, "geometry": f.geometry, "v_ref": v_ref, "complex": f.complex}
        for c in _COLUMNS:
            out[c] = f.column(c, n)
        return out


def read_images(path, as_images=True, as_complex=False):
    """Everything in an image file: dict with data (n, ny, nx) or (n, n_out), seq, times, flags,
    dropped_before, attrs, geometry, complex. as_complex: a complex file's (Re σ, Im σ) pairs as
    complex64 (n, n_elems)."""
    return _read_all(path, "images", as_images and not as_complex, as_complex)


def read_frames(path, as_complex=False):
    """Everything in a raw-frame file: data (n, n_meas), the per-frame columns, attrs, v_ref,
    complex. as_complex: a complex file's (re, im) pairs as complex64 (n, n_meas), v_ref as
    complex128."""
    return _read_all(path, "frames", False, as_complex)
