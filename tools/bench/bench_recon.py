#!/usr/bin/env python3
"""Building H: eitstream's recon/ (bench_recon, C++) against pyEIT (pip), same meshes, same run.

    python3 tools/bench/bench_recon.py [--build-dir build] [--repeat 3] [--pyeit-max-elems 6000]

Meshes: pyEIT's mesh.create(16, h0) for h0 = 0.1, 0.05, 0.035 (distmesh; its time is the "mesh"
column), and pyEIT's structured layer_circle(16, n_fan=8, n_layer=112) = 100,352 triangles (numpy's
removed `np.int` alias is restored for it). Each mesh is written as a CSV folder that bench_recon
loads. pyEIT is timed on the same mesh object with the calls of its examples: EITForward.solve_eit,
compute_jac, JAC.setup(p=0.5, lamb=0.01, method="kotre"), GREIT.setup(p=0.5, lamb=0.01, n=32),
BP.setup(weight="none") — one run each (they take seconds). pyEIT is skipped above
--pyeit-max-elems triangles: its dense inverse of the n_nodes² stiffness matrix (20 GB at 50k
nodes) and of the n_elem² JAC matrix (80 GB at 100k) cannot run here.
Prints a markdown table; seconds, and pyEIT / eitstream ratios.
"""
import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np


def timed(fn):
    """(wall seconds, process CPU seconds over all threads), result"""
    t0, c0 = time.perf_counter(), time.process_time()
    result = fn()
    return (time.perf_counter() - t0, time.process_time() - c0), result


def write_mesh(mesh_obj, folder):
    os.makedirs(folder, exist_ok=True)
    np.savetxt(os.path.join(folder, "nodes.csv"), mesh_obj.node[:, :2], fmt="%.17g", delimiter=",")
    np.savetxt(os.path.join(folder, "elements.csv"), mesh_obj.element, fmt="%d", delimiter=",")
    np.savetxt(os.path.join(folder, "el_pos.csv"), mesh_obj.el_pos, fmt="%d")


def run_ours(binary, folder, repeat, laplacian=True):
    cmd = [binary, folder, "--repeat", str(repeat)] + ([] if laplacian else ["--no-laplacian"])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    values = {}
    for line in out.splitlines():
        key, *numbers = line.split()
        values[key] = tuple(float(x) for x in numbers) if len(numbers) > 1 else float(numbers[0])
    return values


def run_pyeit(mesh_obj):
    import pyeit.eit.bp as bp
    import pyeit.eit.greit as greit
    import pyeit.eit.jac as jac
    import pyeit.eit.protocol as protocol
    from pyeit.eit.fem import EITForward

    proto = protocol.create(16, dist_exc=1, step_meas=1, parser_meas="std")
    t = {}
    t["forward_solve"], _ = timed(lambda: EITForward(mesh_obj, proto).solve_eit())
    t["jacobian"], _ = timed(lambda: EITForward(mesh_obj, proto).compute_jac())

    def setup(cls, **kw):
        solver = cls(mesh_obj, proto)
        solver.setup(**kw)
        return solver

    t["jac_kotre"], _ = timed(lambda: setup(jac.JAC, p=0.5, lamb=0.01, method="kotre"))
    t["greit"], _ = timed(lambda: setup(greit.GREIT, p=0.5, lamb=0.01, n=32, s=20.0, ratio=0.1))
    t["bp"], _ = timed(lambda: setup(bp.BP, weight="none"))
    return t


def fmt_1(x):
    return f"{x * 1e3:.1f} ms" if x < 1 else f"{x:.2f} s"


def fmt_s(t):
    """(wall, cpu) -> 'wall (cpu)'"""
    if t is None:
        return "—"
    return f"{fmt_1(t[0])} ({fmt_1(t[1])})"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pyeit-max-elems", type=int, default=6000)
    ap.add_argument("--cases", default="0.1,0.05,0.035,layer112")
    args = ap.parse_args()
    binary = os.path.join(args.build_dir, "bench_recon")
    if not os.path.exists(binary):
        sys.exit(f"{binary} not found: cmake --build {args.build_dir} --target bench_recon")

    import pyeit.mesh as mesh
    from importlib.metadata import version

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in args.cases.split(","):
            if case.startswith("layer"):
                np.int = int  # pyEIT 1.2.4's layer_circle still uses the alias numpy removed
                n_layer = int(case[len("layer"):])
                t_mesh, m = timed(lambda: mesh.layer_circle(16, n_fan=8, n_layer=n_layer))
                label = f"layer_circle(n_fan=8, n_layer={n_layer})"
            else:
                t_mesh, m = timed(lambda: mesh.create(16, h0=float(case)))
                label = f"create(h0={case})"
            folder = os.path.join(tmp, case)
            write_mesh(m, folder)
            ours = run_ours(binary, folder, args.repeat, laplacian=True)
            theirs = run_pyeit(m) if m.n_elems <= args.pyeit_max_elems else None
            rows.append((label, m.n_nodes, m.n_elems, t_mesh, ours, theirs))
            print(f"done {label}: {m.n_elems} triangles", file=sys.stderr, flush=True)

    keys = [("forward_solve", "forward solve"), ("jacobian", "Jacobian"),
            ("jac_kotre", "JAC (kotre)"), ("greit", "GREIT"), ("bp", "BP")]
    print(f"pyEIT {version('pyeit')}, numpy {np.__version__}, Python {platform.python_version()}, "
          f"{platform.machine()}, {os.cpu_count()} cores; eitstream best of {args.repeat} "
          f"(fresh ForwardModel each run), pyEIT one run. Cells: wall-clock (process CPU time, all "
          f"threads); load average at start {os.getloadavg()[0]:.1f}.\n")
    print("| mesh | nodes | triangles | pyEIT mesh | step | eitstream | pyEIT | pyEIT / eitstream |")
    print("|---|---:|---:|---:|---|---:|---:|---:|")
    for label, n_nodes, n_elems, t_mesh, ours, theirs in rows:
        for i, (key, name) in enumerate(keys):
            mine = ours[key]
            ref = theirs[key] if theirs else None
            ratio = f"{ref[0] / mine[0]:.0f}× ({ref[1] / mine[1]:.0f}×)" if ref else "not run"
            head = (f"| {label} | {n_nodes} | {n_elems} | {fmt_s(t_mesh)} " if i == 0
                    else "| | | | ")
            print(f"{head}| {name} | {fmt_s(mine)} | {fmt_s(ref)} | {ratio} |")
        for key, name in [("jac_laplacian", "JAC (Laplacian prior)"),
                          ("forward_solve_cem", "forward solve, CEM")]:
            print(f"| | | | | {name} | {fmt_s(ours[key])} | — | pyEIT has none |")


if __name__ == "__main__":
    main()
