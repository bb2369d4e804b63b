#!/usr/bin/env python3
"""Writes the mesh of a Model file as a pyEIT-style CSV folder (nodes, elements, el_pos; gzip'd),
which `eitstream model build --mesh csv:DIR` reads back. Used to carry a Gmsh-generated 3-D mesh to
a machine without Gmsh (the H200 host: scripts/device-jac3d.sh).

    python3 tools/bench/model_mesh_csv.py model.h5 OUT_DIR
"""
import gzip
import os
import sys

import h5py
import numpy as np


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    model, out = sys.argv[1], sys.argv[2]
    with h5py.File(model, "r") as f:
        g = f["geometry"]
        if g.attrs["kind"] != "mesh":
            sys.exit(f"{model}: /geometry is a {g.attrs['kind']}, expected a mesh")
        nodes, elements, el_pos = g["nodes"][...], g["elements"][...], g["electrode_nodes"][...]
    os.makedirs(out, exist_ok=True)
    for name, data, fmt in (("nodes", nodes, "%.17g"), ("elements", elements, "%d"),
                            ("el_pos", el_pos.reshape(-1, 1), "%d")):
        with gzip.open(os.path.join(out, f"{name}.csv.gz"), "wt", compresslevel=6) as fh:
            np.savetxt(fh, data, fmt=fmt, delimiter=",")
    print(f"{out}: {len(nodes)} nodes, {len(elements)} elements, {len(el_pos)} electrodes")


if __name__ == "__main__":
    main()
