"""eitprocessing's own results for an impedance image sequence (a .npy written by
`eitstream indices --images-out`): breaths, global TIV and EELI per breath, pixel tidal images
(global timing) and the TIVLungspace mask. Used by test_vs_eitprocessing.py."""
import numpy as np
from eitprocessing.datahandling.continuousdata import ContinuousData
from eitprocessing.datahandling.eitdata import EITData, Vendor
from eitprocessing.features.breath_detection import BreathDetection
from eitprocessing.parameters.eeli import EELI
from eitprocessing.parameters.tidal_impedance_variation import TIV
from eitprocessing.roi.tiv import TIVLungspace


def reference(z, inside, rate_hz):
    """z: (n, ny, nx) impedance images; inside: (ny, nx) bool."""
    z = np.array(z, dtype=np.float64)
    z[:, ~inside] = np.nan
    time = np.arange(z.shape[0]) / rate_hz
    eit = EITData(path="", nframes=z.shape[0], time=time, sample_frequency=rate_hz,
                  vendor=Vendor.SIMULATED, label="eitstream", pixel_impedance=z,
                  suppress_simulated_warning=True)
    glob = eit.get_summed_impedance()
    breaths = BreathDetection().find_breaths(glob)
    idx = lambda t: int(np.argmin(np.abs(time - t)))
    out = {
        "global": glob.values,
        "breaths": [(idx(b.start_time), idx(b.middle_time), idx(b.end_time)) for b in breaths.values],
        "tiv": np.asarray(TIV().compute_continuous_parameter(glob).values, dtype=float),
        "eeli": np.asarray(EELI().compute_parameter(glob).values, dtype=float),
    }
    pix = TIV().compute_pixel_parameter(eit, glob, None, tiv_timing="continuous")
    out["pixel_tiv"] = np.array(pix.values, dtype=float)
    out["lungspace"] = np.nan_to_num(TIVLungspace().apply(eit).mask) > 0
    return out
