#!/usr/bin/env python3
"""3-D set-up: eitstream's recon/ (bench_recon3d, C++) against pyEIT (pip), same meshes, same run.

    python3 tools/bench/bench_recon3d.py [--build-dir build] [--h0 0.2 0.15] [--cylinder 0.08 0.06]

Part 1, pyEIT's ball: pyeit.mesh.create(16, h0, fd=shape.ball) (distmesh, np.random.seed(0), as
../shared/data/pyeit/ball3d_h0_0.2/make_3d_ref.py), then pyEIT's JAC set-up exactly as that reference:
JAC(mesh, protocol.create(16, 1, 1, "std")).setup(p=0.5, lamb=1e-3, method="kotre", perm=1,
jac_normalized=True), which includes its Jacobian. The same mesh is written as a CSV folder and
bench_recon3d times forward + Jacobian + H on it (best of 3). Ratio = pyEIT / eitstream, wall and CPU.
Part 2, Gmsh cylinders (radius 1, height 1, 2 rings × 16 electrodes, adjacent protocol over all 32:
928 measurements) at the given h0: mesh + forward + Jacobian + H, one run each, peak memory.
Prints markdown tables and the machine load (1-minute load average before each run).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def bench_cpp(exe, args):
    out = subprocess.run([exe] + args, check=True, capture_output=True, text=True).stdout
    r = {}
    for line in out.splitlines():
        k, *v = line.split()
        r[k] = [float(x) if x.replace(".", "", 1).replace("e-", "", 1).isdigit() else x for x in v]
    return r


def pyeit_ball(h0, folder):
    import pyeit.eit.jac as jac
    import pyeit.eit.protocol as protocol
    import pyeit.mesh as pmesh
    import pyeit.mesh.shape as shape

    np.random.seed(0)
    t0 = time.perf_counter()
    mesh = pmesh.create(16, h0=h0, fd=shape.ball)
    t_mesh = time.perf_counter() - t0
    proto = protocol.create(16, dist_exc=1, step_meas=1, parser_meas="std")
    eit = jac.JAC(mesh, proto)
    w0, c0 = time.perf_counter(), time.process_time()
    eit.setup(p=0.5, lamb=1e-3, method="kotre", perm=1, jac_normalized=True)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    np.savetxt(f"{folder}/nodes.csv", mesh.node, delimiter=",", fmt="%.17g")
    np.savetxt(f"{folder}/elements.csv", mesh.element, delimiter=",", fmt="%d")
    np.savetxt(f"{folder}/el_pos.csv", mesh.el_pos, delimiter=",", fmt="%d")
    return mesh.element.shape[0], mesh.node.shape[0], t_mesh, wall, cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--h0", type=float, nargs="*", default=[0.2, 0.15])
    ap.add_argument("--cylinder", type=float, nargs="*", default=[])
    a = ap.parse_args()
    exe = os.path.join(a.build_dir, "bench_recon3d")
    print(f"machine: {os.cpu_count()} cores; OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}")
    if a.h0:
        print("\n| ball h0 | tets | nodes | load | pyEIT JAC setup wall / cpu s | eitstream fwd+J+H wall / cpu s (eigen) | (cholmod) | ratio wall / cpu |")
        print("|---|---|---|---|---|---|---|---|")
        for h0 in a.h0:
            with tempfile.TemporaryDirectory() as d:
                load = os.getloadavg()[0]
                n_e, n_n, _, pw, pc = pyeit_ball(h0, d)
                e = bench_cpp(exe, ["csv", d, "--solver", "eigen"])["setup_total"]
                c = bench_cpp(exe, ["csv", d, "--solver", "cholmod"])["setup_total"]
                bw, bc = min(e[0], c[0]), min(e[1], c[1])
                print(f"| {h0} | {n_e} | {n_n} | {load:.1f} | {pw:.2f} / {pc:.2f} | {e[0]:.3f} / {e[1]:.3f} | "
                      f"{c[0]:.3f} / {c[1]:.3f} | {pw / bw:.0f}× / {pc / bc:.0f}× |", flush=True)
    if a.cylinder:
        print("\n| cylinder h0 | solver | tets | nodes | load | mesh s | forward s | Jacobian s | H s | fwd+J+H s | total wall / cpu s | peak MiB |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for h0 in a.cylinder:
            for solver in ("cholmod", "eigen"):
                load = os.getloadavg()[0]
                w0 = time.perf_counter()
                r = bench_cpp(exe, ["cylinder", "--h0", str(h0), "--solver", solver])
                wall = time.perf_counter() - w0
                cpu = r["mesh"][1] + r["setup_total"][1]
                print(f"| {h0} | {solver} | {int(r['n_elems'][0])} | {int(r['n_nodes'][0])} | {load:.1f} | "
                      f"{r['mesh'][0]:.2f} | {r['forward'][0]:.2f} | {r['jacobian'][0]:.2f} | {r['jac_H'][0]:.2f} | "
                      f"{r['setup_total'][0]:.2f} | {wall:.1f} / {cpu:.1f} | {r['peak_rss_mib'][0]:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
