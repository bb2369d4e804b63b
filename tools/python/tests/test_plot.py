import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import eitstream


def grid_geometry(n=8):
    c = (np.arange(n) + 0.5) * 2 / n - 1
    x, y = np.meshgrid(c, c)
    return {"kind": "grid", "nx": n, "ny": n, "x0": c[0], "y0": c[0], "dx": 2 / n, "dy": 2 / n,
            "mask": (x ** 2 + y ** 2 > 1).astype(np.uint8)}


def test_grid_plot_true_aspect_mask_symmetric_colours_and_colour_bar():
    g = grid_geometry()
    img = np.linspace(-1, 3, 64).astype(np.float32)
    fig, ax = plt.subplots()
    art = eitstream.plot_image(ax, img, g)
    lo, hi = art.get_clim()
    assert lo == -hi and hi > 0                       # centred on zero
    assert art.get_cmap().name == "RdBu_r"            # diverging
    assert len(fig.axes) == 2                          # the colour bar
    assert ax.get_aspect() == 1.0
    shown = art.get_array()
    assert np.ma.getmaskarray(shown)[g["mask"] == 1].all()   # outside is not drawn
    assert len(ax.lines) == 1 and len(ax.lines[0].get_xdata()) == 16   # electrodes
    plt.close(fig)


def test_mesh_plot_uses_tripcolor_with_element_values():
    g = {"kind": "mesh", "output_on": "elements",
         "nodes": np.array([[0, 0], [1, 0], [0, 1], [1, 1]], float),
         "elements": np.array([[0, 1, 2], [1, 3, 2]]), "electrode_nodes": np.array([0, 1, 3, 2])}
    fig, ax = plt.subplots()
    art = eitstream.plot_image(ax, np.array([0.5, -2.0]), g)
    assert type(art).__name__ == "TriMesh" or type(art).__name__ == "PolyCollection"
    assert art.get_clim() == (-2.0, 2.0)
    plt.close(fig)


def test_voxel_grid_plots_one_plane_and_asks_for_it():
    import pytest
    g = grid_geometry()
    g3 = {**g, "nz": 2, "mask": np.stack([g["mask"], g["mask"]])}
    img = np.concatenate([np.full(64, 1.0), np.full(64, -2.0)]).astype(np.float32)
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="give plane=k"):
        eitstream.plot_image(ax, img, g3)
    art = eitstream.plot_image(ax, img, g3, plane=1)
    shown = art.get_array()
    assert np.nanmin(shown) == -2.0 and np.nanmax(shown) == -2.0   # plane 1's values
    plt.close(fig)
