"""`eitstream run --source phantom:breathing?… --indices … --record images.h5`: the indices recorded
into the image file (/indices) report the phantom's programmed breathing rate, a tidal variation
that scales with the programmed conductivity drop, and the right lung's programmed delay (as the
lag between the right and left region sums). Skips visibly without the binary or h5py."""
import os
import pathlib
import subprocess

import pytest

RATE_PER_MIN = 40.0
DELAY_S = 0.3
FPS = 50.0


def eitstream():
    path = os.environ.get("EITSTREAM_BIN") or str(
        pathlib.Path(__file__).resolve().parents[3] / "build" / "eitstream")
    if not os.access(path, os.X_OK):
        pytest.skip(f"SKIPPED: eitstream binary not found at {path} (set EITSTREAM_BIN)")
    return path


def start(tmp_path, tidal):
    out = tmp_path / f"breathing-{tidal}.h5"
    source = f"phantom:breathing?rate={RATE_PER_MIN:g}&tidal={tidal:g}&delay={DELAY_S:g}"
    proc = subprocess.Popen(
        [eitstream(), "run", "--source", source, "--fps", f"{FPS:g}", "--duration", "11",
         "--endpoint", "tcp://127.0.0.1:*", "--indices", "tcp://127.0.0.1:*", "--record", str(out),
         "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, out


def finish(proc, out):
    _, err = proc.communicate(timeout=90)
    assert proc.returncode == 0, err
    h5py = pytest.importorskip("h5py", reason="SKIPPED: python3 h5py is not installed")
    import numpy as np
    with h5py.File(out, "r") as f:
        g = f["indices"]
        assert g.attrs["format"] == b"eitstream-indices" or g.attrs["format"] == "eitstream-indices"
        cols = [c.decode() for c in g["breath_columns"][()]]
        names = [c.decode() for c in g["region_names"][()]]
        breaths = {c: v for c, v in zip(cols, np.asarray(g["breaths"][()]).T)}
        regions = np.asarray(g["regions"][()])
        assert regions.shape[0] == f["images"].shape[0]
        assert (g["seq"][()] == f["seq"][()]).all()
    return breaths, {n: regions[:, i] for i, n in enumerate(names)}


def lag_s(a, b):
    """How many seconds b lags a (cross-correlation peak of the mean-free signals)."""
    import numpy as np
    a, b = a - a.mean(), b - b.mean()
    n = len(a)
    best, best_k = -np.inf, 0
    for k in range(-int(FPS), int(FPS) + 1):
        x, y = (a[:n - k], b[k:]) if k >= 0 else (a[-k:], b[:n + k])
        c = float(np.dot(x, y)) / len(x)
        if c > best:
            best, best_k = c, k
    return best_k / FPS


def test_indices_of_the_breathing_phantom_report_its_programmed_breathing(tmp_path):
    pytest.importorskip("h5py", reason="SKIPPED: python3 h5py is not installed")
    runs = [start(tmp_path, 0.15), start(tmp_path, 0.3)]
    (small, _), (large, regions) = [finish(*r) for r in runs]
    # Inner breaths (the first and the last may be cut by the start and the end).
    rate = large["rate_per_min"][1:-1]
    print(f"rates {rate}, TIV {small['tiv']} vs {large['tiv']}")
    assert len(rate) >= 4
    assert abs(np.median(rate) - RATE_PER_MIN) < 0.05 * RATE_PER_MIN
    ratio = np.median(large["tiv"][1:-1]) / np.median(small["tiv"][1:-1])
    assert 1.7 < ratio < 2.5, f"TIV ratio {ratio} for a 2× conductivity drop"
    assert (large["pixel_data"][1:-1] == 1).all()
    assert np.isfinite(large["gi"][1:-1]).all()
    lag = lag_s(regions["left"], regions["right"])
    print(f"right lung lags the left by {lag:.2f} s (programmed {DELAY_S} s)")
    assert abs(lag - DELAY_S) <= 0.1  # region sums of a blurred image: ±5 frames


import numpy as np  # noqa: E402  (used above; imported late so a missing numpy skips via h5py)
