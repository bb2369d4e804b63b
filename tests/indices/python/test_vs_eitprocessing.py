"""eitstream's online indices against eitprocessing on the same image sequence: the Goe-MF
neonate (../shared/data/recordings/P04P-1016.get) reconstructed by `eitstream indices` with the
built-in GREIT model and the recording's mean as reference. Skips visibly without eitprocessing,
h5py, the data or the binary."""
import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

eitprocessing = pytest.importorskip("eitprocessing", reason="eitprocessing not installed")
h5py = pytest.importorskip("h5py", reason="h5py not installed")

from eitprocessing_reference import reference  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[3]
DATA = pathlib.Path(os.environ.get("EIT_SHARED_DATA", ROOT.parent / "shared" / "data"))
NEONATE = DATA / "recordings" / "P04P-1016.get"
BIN = os.environ.get("EITSTREAM_BIN", str(ROOT / "build" / "eitstream"))


def run_indices(args, tmp_path, name):
    if not pathlib.Path(BIN).exists():
        pytest.skip(f"eitstream binary not built: {BIN}")
    out = tmp_path / f"{name}.json"
    subprocess.run([BIN, "indices", *args, "-o", str(out)], check=True, capture_output=True)
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def neonate(tmp_path_factory):
    if not NEONATE.exists():
        pytest.skip(f"shared data absent: {NEONATE}")
    tmp = tmp_path_factory.mktemp("neonate")
    npy = tmp / "z.npy"
    ours = run_indices([str(NEONATE), "--images-out", str(npy)], tmp, "ours")
    z = np.load(npy)
    g = ours["geometry"]
    inside = np.array(g["inside"], dtype=bool).reshape(g["ny"], g["nx"])
    return ours, z, inside, reference(z, inside, ours["frame_rate_hz"]), tmp


def test_same_breaths(neonate):
    ours, _, _, ref, _ = neonate
    got = [tuple(b["frames"]) for b in ours["breaths"]]
    assert len(got) == len(ref["breaths"]) >= 8
    for a, b in zip(got, ref["breaths"]):
        assert max(abs(x - y) for x, y in zip(a, b)) <= 1, (a, b)


def test_global_signal_tiv_and_eeli_match(neonate):
    ours, _, _, ref, _ = neonate
    g = np.array(ours["global"])
    assert np.max(np.abs(g - ref["global"])) <= 1e-9 * np.max(np.abs(ref["global"]))
    tiv = np.array([b["tiv"] for b in ours["breaths"]])
    eeli = np.array([b["eeli"] for b in ours["breaths"]])
    np.testing.assert_allclose(tiv, ref["tiv"], rtol=1e-9, atol=0)
    np.testing.assert_allclose(eeli, ref["eeli"], rtol=1e-9, atol=0)


def test_pixel_tidal_images_and_lung_space_match(neonate):
    ours, _, inside, ref, _ = neonate
    tidal = np.array([np.array(b["tidal"], dtype=float).reshape(inside.shape)
                      for b in ours["breaths"]])
    assert np.array_equal(np.isnan(tidal), np.isnan(ref["pixel_tiv"]))
    scale = np.nanmax(np.abs(ref["pixel_tiv"]))
    assert np.nanmax(np.abs(tidal - ref["pixel_tiv"])) <= 1e-12 * scale
    lung = np.array(ours["breaths"][-1]["lung_space"], dtype=float).reshape(inside.shape) > 0
    assert lung.sum() > 0
    assert np.array_equal(lung, ref["lungspace"])


def test_neonate_physiology(neonate):
    ours = neonate[0]
    assert abs(ours["global_spectral_peak_hz"] - 0.59) < 0.03
    rates = [b["rate_per_min"] for b in ours["breaths"]]
    assert 30 < np.mean(rates) < 40


def test_image_file_gives_the_same_indices(neonate):
    """The same images written as an eitstream image file (docs/formats.md) and read back."""
    ours, z, inside, _, tmp = neonate
    path = tmp / "images.h5"
    n = z.shape[0]
    with h5py.File(path, "w") as f:
        f["images"] = (-z).reshape(n, -1).astype(np.float32)  # back to conductivity change
        f["seq"] = np.arange(n, dtype=np.uint64)
        f["t_acquired_ns"] = (np.arange(n) * 1e9 / ours["frame_rate_hz"]).astype(np.int64)
        f["flags"] = np.zeros(n, np.uint32)
        g = f.create_group("geometry")
        g.attrs["kind"] = "grid"
        ny, nx = inside.shape
        for k, v in dict(nx=nx, ny=ny, x0=-1.0, y0=-1.0, dx=2 / (nx - 1), dy=2 / (ny - 1)).items():
            g.attrs[k] = v
        g["mask"] = (~inside).astype(np.uint8)
        f.attrs["format"] = "eitstream-images"
        f.attrs["version"] = 1
        f.attrs["frame_rate_hz"] = float(ours["frame_rate_hz"])
    again = run_indices([str(path)], tmp, "again")
    assert [b["frames"] for b in again["breaths"]] == [b["frames"] for b in ours["breaths"]]
    assert [b["tiv"] for b in again["breaths"]] == [b["tiv"] for b in ours["breaths"]]


def test_csv_output(neonate, tmp_path):
    ours = neonate[0]
    out = tmp_path / "b.csv"
    subprocess.run([BIN, "indices", str(NEONATE), "-o", str(out)], check=True, capture_output=True)
    lines = out.read_text().splitlines()
    assert lines[0].startswith("number,start_frame")
    assert len(lines) == 1 + len(ours["breaths"])
