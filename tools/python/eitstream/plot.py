"""Drawing one EIT image: grids with their true aspect and mask, meshes with tripcolor, a
diverging colour map centred on zero, a colour bar and the electrodes."""
import numpy as np


def _limits(values):
    v = np.asarray(values, dtype=float)
    m = np.nanmax(np.abs(v)) if np.isfinite(v).any() else 1.0
    return (-m, m) if m > 0 else (-1.0, 1.0)


def _electrodes_on_grid(g, n_electrodes):
    """Electrode positions for a grid: pyEIT's (−cos θk, sin θk) on the circle that bounds the
    grid's inside (electrode 0 at 9 o'clock, clockwise), as eitstream's models place them."""
    cx = g["x0"] + (g["nx"] - 1) * g["dx"] / 2
    cy = g["y0"] + (g["ny"] - 1) * g["dy"] / 2
    r = max(g["nx"] * g["dx"], g["ny"] * g["dy"]) / 2
    th = 2 * np.pi * np.arange(n_electrodes) / n_electrodes
    return cx - r * np.cos(th), cy + r * np.sin(th)


def plot_image(ax, image, geometry, cmap="RdBu_r", colorbar=True, electrodes=True,
               n_electrodes=16, vlim=None, title=None, plane=None):
    """Draws one image on a matplotlib Axes and returns the artist.

    image: the row of an image file (n_out,), (ny, nx) or (nz, ny, nx), or a published image.
    geometry: the dict of eitstream.geometry_of / ImageFile.geometry, or the series message's
    "geometry". plane: which z plane of a voxel grid to draw (0 = lowest); required there."""
    g = dict(geometry)
    vals = np.asarray(image, dtype=float)
    if g.get("kind") == "grid" and int(g.get("nz", 1)) > 1:
        nz, ny, nx = int(g["nz"]), int(g["ny"]), int(g["nx"])
        if plane is None or not 0 <= int(plane) < nz:
            raise ValueError(f"a voxel grid of {nz} planes: give plane=k with 0 <= k < {nz}")
        vals = vals.reshape(nz, ny, nx)[int(plane)]
        mask = np.asarray(g.get("mask", np.zeros(nz * ny * nx))).reshape(nz, ny, nx)[int(plane)]
        g = {**g, "nz": 1, "mask": mask}
    lo, hi = vlim if vlim else _limits(vals)
    if g.get("kind") == "grid":
        nx, ny = int(g["nx"]), int(g["ny"])
        img = vals.reshape(ny, nx).copy()
        mask = np.asarray(g.get("mask", np.zeros(nx * ny)), dtype=bool).reshape(ny, nx)
        img[mask] = np.nan
        x0, y0, dx, dy = (float(g[k]) for k in ("x0", "y0", "dx", "dy"))
        extent = (x0 - dx / 2, x0 + (nx - 0.5) * dx, y0 - dy / 2, y0 + (ny - 0.5) * dy)
        artist = ax.imshow(np.ma.masked_invalid(img), origin="lower", extent=extent, cmap=cmap,
                           vmin=lo, vmax=hi, interpolation="nearest")
        if electrodes:
            ex, ey = _electrodes_on_grid(g, n_electrodes)
            ax.plot(ex, ey, "ko", ms=4)
            ax.annotate("0", (ex[0], ey[0]), textcoords="offset points", xytext=(-10, 0))
    elif g.get("kind") == "mesh":
        xy = np.asarray(g["nodes"], dtype=float)
        tri = np.asarray(g["elements"], dtype=int)
        if g.get("output_on", "elements") == "nodes":
            artist = ax.tripcolor(xy[:, 0], xy[:, 1], tri, vals.ravel(), shading="gouraud",
                                  cmap=cmap, vmin=lo, vmax=hi)
        else:
            artist = ax.tripcolor(xy[:, 0], xy[:, 1], tri, facecolors=vals.ravel(), cmap=cmap,
                                  vmin=lo, vmax=hi)
        if electrodes and "electrode_nodes" in g:
            el = np.asarray(g["electrode_nodes"], dtype=int)
            ax.plot(xy[el, 0], xy[el, 1], "ko", ms=4)
            ax.annotate("0", xy[el[0]], textcoords="offset points", xytext=(-10, 0))
    else:
        raise ValueError(f"geometry kind {g.get('kind')!r}: expected grid or mesh")
    ax.set_aspect("equal")
    if colorbar:
        ax.figure.colorbar(artist, ax=ax, label="conductivity change")
    if title:
        ax.set_title(title)
    return artist
