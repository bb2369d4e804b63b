import subprocess
import time

import numpy as np

import eitstream
from conftest import run


def test_recorded_run_reads_back_with_geometry_and_every_seq(eitstream_bin, tmp_path):
    img, raw = tmp_path / "img.h5", tmp_path / "raw.h5"
    run(eitstream_bin, "run", "--frames", "120", "--fps", "0", "--policy", "lossless",
        "--endpoint", "tcp://127.0.0.1:*", "--quiet", "--record", img, "--record-raw", raw)
    r = eitstream.read_images(img)
    g = r["geometry"]
    assert r["data"].shape == (120, g["ny"], g["nx"])
    assert list(r["seq"]) == list(range(120))
    outside = g["mask"] == 1
    assert outside.any() and np.isnan(r["data"][:, outside]).all()
    assert np.isfinite(r["data"][:, ~outside]).all()
    assert r["attrs"]["format"] == "eitstream-images"
    f = eitstream.read_frames(raw)
    assert f["data"].shape == (120, 208)
    assert f["v_ref"].shape == (208,)
    # The image is H·(v − v_ref): recompute one pixel-independent quantity, the frame order.
    assert (np.diff(f["t_acquired_ns"]) >= 0).all()


def test_image_file_grows_while_run_writes_it_swmr(eitstream_bin, tmp_path):
    img = tmp_path / "live.h5"
    p = subprocess.Popen([eitstream_bin, "run", "--fps", "200", "--duration", "4",
                          "--endpoint", "tcp://127.0.0.1:*", "--quiet", "--record", str(img),
                          "--record-chunk", "20"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 10
        while not img.exists() and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)
        seen = []
        with eitstream.ImageFile(img) as f:
            for _ in range(4):
                seen.append(f.refresh())
                time.sleep(0.5)
            n = seen[-1]
            seq = f.column("seq", n)
        assert seen[0] > 0 and seen[-1] > seen[0], seen   # read while it grows
        assert list(seq) == list(range(n))
    finally:
        p.wait(timeout=20)
    assert p.returncode == 0


def test_complex_raw_frames_read_back_as_complex(eitstream_bin, tmp_path):
    """A complex recording kept by run --record-raw comes back as the same complex numbers."""
    gnc, src, raw = tmp_path / "gnc.h5", tmp_path / "c.npy", tmp_path / "raw.h5"
    run(eitstream_bin, "model", "build", "--algorithm", "gn", "--complex", "--h0", "0.2",
        "--iterations", "2", "-o", gnc)
    rng = np.random.default_rng(3)
    frames = (1 + 0.1 * rng.standard_normal((4, 208))
              + 1j * 0.1 * rng.standard_normal((4, 208))).astype(np.complex64)
    np.save(src, frames)
    run(eitstream_bin, "run", "--source", src, "--model", gnc, "--complex", "interleaved",
        "--reference", "frame:0", "--fps", "0", "--policy", "lossless", "--frames", "4",
        "--endpoint", "tcp://127.0.0.1:*", "--quiet", "--record-raw", raw)
    f = eitstream.read_frames(raw)
    assert f["complex"] and f["data"].shape == (4, 416)
    c = eitstream.read_frames(raw, as_complex=True)
    assert c["data"].dtype == np.complex64 and np.array_equal(c["data"], frames)
    assert c["v_ref"].shape == (208,) and np.allclose(c["v_ref"], frames[0])


def test_voxel_grid_image_file_reads_as_planes(eitstream_bin, tmp_path):
    """A 3-D model's images (docs/formats.md: nz, mask [nz, ny, nx]) read as (n, nz, ny, nx)."""
    import pytest
    model, frames, img = tmp_path / "vox.h5", tmp_path / "frames.npy", tmp_path / "img.h5"
    built = subprocess.run([str(eitstream_bin), "model", "build", "--dim", "3", "--h0", "0.5",
                            "--algorithm", "jac", "--voxels", "8x8x2", "-o", str(model)],
                           capture_output=True, text=True)
    if built.returncode != 0 and "Gmsh" in built.stderr + built.stdout:
        pytest.skip("built without Gmsh")
    assert built.returncode == 0, built.stderr
    rng = np.random.default_rng(1)
    np.save(frames, (1 + 0.01 * rng.standard_normal((20, 208))).astype(np.float32))
    run(eitstream_bin, "reconstruct", frames, "--model", model, "--fps", "10", "--quiet",
        "-o", img)
    r = eitstream.read_images(img)
    g = r["geometry"]
    assert g["nz"] == 2
    assert r["data"].shape == (20, 2, 8, 8)
    outside = np.asarray(g["mask"]).reshape(2, 8, 8) == 1
    assert np.isnan(r["data"][:, outside]).all()
    assert np.isfinite(r["data"][:, ~outside]).all()
