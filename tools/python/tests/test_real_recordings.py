"""`eitstream reconstruct` on the real recordings in ../shared/data, checked with numbers the
data's README states (the IIRC target turns ~11°/frame, the neonate breathes at 0.59 Hz)."""
import numpy as np
import pytest

import eitstream
from conftest import run


def target_angles(images):
    """Angle of the strongest change's centroid per frame (grid images, NaN outside)."""
    n, ny, nx = images.shape
    c = np.arange(nx) - (nx - 1) / 2
    x, y = np.meshgrid(c, np.arange(ny) - (ny - 1) / 2)
    out = []
    for im in images:
        a = np.nan_to_num(np.abs(im))
        w = np.where(a > 0.5 * a.max(), a, 0)
        out.append(np.degrees(np.arctan2((w * y).sum(), (w * x).sum())))
    return np.array(out)


def test_iirc_tank_with_eidors_greit_turns_about_11_degrees_per_frame(eitstream_bin, shared_data,
                                                                    tmp_path):
    rec = shared_data / "recordings"
    run(eitstream_bin, "model", "import", rec / "GREIT_v10_Circ_Matrix.mat", "-o",
        tmp_path / "greit.h5")
    out = tmp_path / "iirc.h5"
    p = run(eitstream_bin, "reconstruct", rec / "iirc_data_2006.mat", "--model",
            tmp_path / "greit.h5", "--variable", "v_rotate", "--reference",
            "variable:v_reference", "-o", out, "--quiet")
    r = eitstream.read_images(out)
    assert r["data"].shape[0] == 100
    assert r["attrs"]["reference"].startswith("variable:v_reference")
    steps = (np.diff(target_angles(r["data"])) + 180) % 360 - 180
    print(f"IIRC: mean step {steps.mean():.2f}°/frame, median {np.median(steps):.2f}°")
    assert 8 <= abs(np.median(steps)) <= 14


def test_goe_mf_neonate_global_signal_peaks_at_059_hz(eitstream_bin, shared_data, tmp_path):
    out = tmp_path / "neonate.h5"
    p = run(eitstream_bin, "reconstruct", shared_data / "recordings" / "P04P-1016.get", "-o", out)
    assert "reference first:10" in p.stderr          # the default, printed
    r = eitstream.read_images(out)
    assert r["attrs"]["frame_rate_hz"] == 13
    g = np.nansum(r["data"], axis=(1, 2))
    g = g - g.mean()
    n = 8 * len(g)  # zero-padded periodogram: the peak to ~0.007 Hz instead of a 0.059 Hz bin
    spec = np.abs(np.fft.rfft(g, n))
    f = np.fft.rfftfreq(n, 1 / 13.0)
    band = (f > 0.1) & (f < 3)
    peak = f[band][np.argmax(spec[band])]
    print(f"neonate: global signal peak {peak:.3f} Hz")
    assert abs(peak - 0.59) <= 0.03               # half a bin of the unpadded FFT (13/220 Hz)


@pytest.mark.parametrize("name,extra", [
    ("draeger_ID_SC_10_60.eit", []),
    ("montreal_data_1995.mat", ["--variable", "zc_demo3", "--reference", "variable:zc_h_demo3"]),
])
def test_reconstruct_reads_the_other_recordings(eitstream_bin, shared_data, tmp_path, name, extra):
    out = tmp_path / "x.h5"
    p = run(eitstream_bin, "reconstruct", shared_data / "recordings" / name, "-o", out, *extra)
    r = eitstream.read_images(out)
    assert r["data"].shape[0] > 0 and np.isfinite(np.nanmax(r["data"]))
    if name.endswith(".eit"):
        assert r["data"].shape[0] == 59
        assert "truncated" in p.stdout and "truncated" in p.stderr   # the reader's warning, said


# Every file in ../shared/data/recordings, and how to reconstruct it: the options, the frames the
# file holds, and the reference (the file's own where it has one). A file not listed fails
# test_every_shared_recording_is_covered, so a recording added there cannot go untested.
NOT_RECORDINGS = {"GREIT_v10_Circ_Matrix.mat",  # a reconstruction matrix (used as a model above)
                  "P04P-1016.prl", "montreal_data_1995.readme", "README.md"}
RECORDINGS = {
    # name: (extra options, frames, reference attribute starts with)
    "iirc_data_2006.mat": (["--model", "{greit}", "--variable", "v_rotate", "--reference",
                            "variable:v_reference"], 100, "variable:v_reference"),
    "montreal_data_1995.mat": (["--variable", "zc_demo3", "--reference", "variable:zc_h_demo3"],
                               None, "variable:zc_h_demo3"),
    "P04P-1016.get": ([], 220, "first:10"),              # no reference in the file
    "draeger_ID_SC_10_60.eit": ([], 59, "first:10"),      # no reference in the file
    "openeit_simdata.txt": (["--model", "{m32}"], 11, "first:10"),  # 32 electrodes, opposite drive
}


@pytest.fixture(scope="module")
def models(eitstream_bin, shared_data, tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    run(eitstream_bin, "model", "import", shared_data / "recordings" / "GREIT_v10_Circ_Matrix.mat",
        "-o", d / "greit.h5")
    run(eitstream_bin, "model", "build", "--electrodes", "32", "--drive-distance", "16",
        "--algorithm", "jac", "--h0", "0.15", "-o", d / "m32.h5")
    return {"greit": d / "greit.h5", "m32": d / "m32.h5"}


def test_every_shared_recording_is_covered(shared_data):
    present = {p.name for p in (shared_data / "recordings").iterdir()}
    unknown = present - NOT_RECORDINGS - set(RECORDINGS)
    assert not unknown, f"recordings without a reconstruct check here: {sorted(unknown)}"


@pytest.mark.parametrize("name", sorted(RECORDINGS))
def test_every_shared_recording_reconstructs(eitstream_bin, shared_data, models, tmp_path, name):
    path = shared_data / "recordings" / name
    if not path.exists():
        pytest.skip(f"{path} absent")
    extra, frames, reference = RECORDINGS[name]
    extra = [e.format(**models) for e in extra]
    out = tmp_path / "images.h5"
    p = run(eitstream_bin, "reconstruct", path, "-o", out, "--quiet", *extra)
    assert f"reference {reference}" in p.stderr      # the reference in use, printed
    r = eitstream.read_images(out)
    assert r["attrs"]["reference"].startswith(reference)
    n = r["data"].shape[0]
    assert n == frames if frames else n > 0
    assert np.array_equal(r["seq"], np.arange(n))    # every frame, in order
    data = r["data"].reshape(n, -1)
    finite = np.isfinite(data)
    assert finite.any(axis=1).all()                   # every frame has an image
    # The images change over the recording (a reference that matched every frame, or frames
    # that were all the same, would give constant images).
    inside = finite.all(axis=0)                        # pixels inside the mask
    assert inside.any() and data[:, inside].std(axis=0).max() > 0
