"""3-D models in the live view (headless Chromium): a voxel-grid model (`model build --dim 3
--voxels 8x8x4`) is drawn as a row of its 4 z-planes, each with its body pixels coloured; a
per-tetrahedron model gets a notice that names --voxels instead of a drawing.
Screenshots go to build/test-artifacts/view/ (EIT_VIEW_ARTIFACTS)."""
import subprocess
import time

from conftest import Process, artifact_dir, eitstream_bin, view_port

PROBE = """
const st = window.eitView, view = window.eitImageView;
if (!st.series || !st.latest) return null;
const g = st.series.geometry, px = view.pixels ? view.pixels.data : [];
const opaque = [];  // body pixels drawn per plane, and the mask's count of them
const inside = [];
for (let p = 0; p < view.planes; p++) {
  let n = 0, m = 0;
  for (let i = p * g.nx * g.ny; i < (p + 1) * g.nx * g.ny; i++) {
    if (px[4 * i + 3] === 255) n++;
    if (!g.mask[i]) m++;
  }
  opaque.push(n); inside.push(m);
}
return {planes: view.planes, shape: st.series.image.shape, opaque, inside,
        notice: view.notice || "", frames: st.framesReceived, drawn: st.framesDrawn,
        values: st.latest.values.length};
"""


def build(tmp_path, name, *extra):
    out = tmp_path / name
    subprocess.run([eitstream_bin(), "model", "build", "--dim", "3", "--h0", "0.45",
                    "--electrodes", "16", "--rings", "2",
                    "--algorithm", "jac", *extra, "-o", str(out)],
                   check=True, capture_output=True, text=True, timeout=120)
    return out


def probe_when_drawn(driver, timeout=20):
    deadline = time.monotonic() + timeout
    while True:
        got = driver.execute_script(PROBE)
        # Received is not drawn: the page draws on its next animation frame, which a loaded
        # machine delays, so wait for both.
        if got and got["frames"] >= 3 and got["drawn"] >= 1:
            return got
        assert time.monotonic() < deadline, f"the page received or drew no frames: {got}"
        time.sleep(0.2)


def run_view(model, tmp_path):
    """`run` replaying frames around the model's v_ref (a .npy file), looped at 20 frames/s."""
    import h5py
    import numpy as np

    with h5py.File(model, "r") as f:
        v_ref = f["v_ref"][()]
    rng = np.random.default_rng(5)
    frames = (v_ref * (1 + 0.01 * rng.standard_normal((40, v_ref.size)))).astype("<f4")
    source = tmp_path / f"{model.stem}_frames.npy"
    np.save(source, frames)
    return Process([eitstream_bin(), "run", "--model", str(model), "--source", str(source),
                    "--loop", "--http", "127.0.0.1:0", "--endpoint", "tcp://127.0.0.1:*",
                    "--fps", "20", "--duration", "30", "--quiet"])


def test_voxel_model_is_drawn_as_z_planes(chromium, tmp_path):
    model = build(tmp_path, "voxels.h5", "--voxels", "8x8x4")
    run = run_view(model, tmp_path)
    try:
        driver = chromium(f"http://127.0.0.1:{view_port(run)}/")
        got = probe_when_drawn(driver)
        driver.save_screenshot(str(artifact_dir() / "view_3d_voxels.png"))
        assert got["shape"] == [4, 8, 8]
        assert got["values"] == 4 * 8 * 8
        assert got["planes"] == 4
        assert got["notice"] == ""
        # Every plane shows its body: each voxel inside the mask is painted, none outside.
        assert got["opaque"] == got["inside"]
        assert all(n > 20 for n in got["inside"])
    finally:
        run.stop()


def test_per_tetrahedron_model_gets_a_notice(chromium, tmp_path):
    model = build(tmp_path, "tets.h5")
    run = run_view(model, tmp_path)
    try:
        driver = chromium(f"http://127.0.0.1:{view_port(run)}/")
        got = probe_when_drawn(driver)
        assert "--voxels" in got["notice"]
        assert got["planes"] == 1
    finally:
        run.stop()
