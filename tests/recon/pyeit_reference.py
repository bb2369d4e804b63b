#!/usr/bin/env python3
"""Writes a pyEIT reference case for the recon cross-check test (test_pyeit_crosscheck.cpp).

    python3 pyeit_reference.py OUT_DIR [H0]

Makes a pyEIT circle mesh (16 electrodes, density H0, default 0.08) with the installed pyEIT,
and writes into OUT_DIR (CSV, no header, %.17g):
  nodes.csv elements.csv el_pos.csv ref_node.csv   the mesh (z dropped)
  v0.csv jac.csv                                   EITForward at perm = 1 (adjacent drive, std)
  H_jac.csv                                        JAC.setup(p=0.5, lamb=0.01, method="kotre")
  H_greit.csv greit_mask.csv                       GREIT.setup(p=0.5, lamb=0.01, n=32, s=20, ratio=0.1)
  pyeit_version.txt
Exit status 3 (message on stderr) when numpy or pyEIT cannot be imported, so the caller can skip.
pyEIT is used as a black box: only its public calls.
"""
import sys


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    h0 = float(sys.argv[2]) if len(sys.argv) > 2 else 0.08
    try:
        import numpy as np
        import pyeit.eit.greit as greit
        import pyeit.eit.jac as jac
        import pyeit.eit.protocol as protocol
        import pyeit.mesh as mesh
        from pyeit.eit.fem import EITForward
    except Exception as error:  # noqa: BLE001 - any import failure means "skip"
        print(f"pyEIT not importable: {error!r}", file=sys.stderr)
        return 3
    try:
        from importlib.metadata import version

        pyeit_version = version("pyeit")
    except Exception:  # noqa: BLE001
        pyeit_version = "unknown"

    import os

    os.makedirs(out, exist_ok=True)

    def save(name, array, fmt="%.17g"):
        np.savetxt(os.path.join(out, name), np.atleast_1d(array), fmt=fmt, delimiter=",")

    mesh_obj = mesh.create(16, h0=h0)
    proto = protocol.create(16, dist_exc=1, step_meas=1, parser_meas="std")
    save("nodes.csv", mesh_obj.node[:, :2])
    save("elements.csv", mesh_obj.element, fmt="%d")
    save("el_pos.csv", mesh_obj.el_pos, fmt="%d")
    save("ref_node.csv", np.array([mesh_obj.ref_node]), fmt="%d")

    fwd = EITForward(mesh_obj, proto)
    save("v0.csv", fwd.solve_eit())
    J, _ = EITForward(mesh_obj, proto).compute_jac()
    save("jac.csv", J)

    ej = jac.JAC(mesh_obj, proto)
    ej.setup(p=0.5, lamb=0.01, method="kotre")
    save("H_jac.csv", ej.H)

    eg = greit.GREIT(mesh_obj, proto)
    eg.setup(p=0.5, lamb=0.01, n=32, s=20.0, ratio=0.1)
    save("H_greit.csv", eg.H)
    save("greit_mask.csv", eg.get_grid()[2].astype(int), fmt="%d")
    with open(os.path.join(out, "pyeit_version.txt"), "w") as f:
        f.write(pyeit_version + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
