#!/usr/bin/env python3
"""Gauss-Newton absolute imaging, eitstream vs pip pyEIT, side by side on the same data.

For each case N_EL:H0 it meshes with pyEIT (`pyeit.mesh.create`), simulates pyEIT's static example
(examples/eit_static_jac.py: discs of sigma 10 at (0.4, 0.4) and 0.1 at (-0.4, -0.4), r = 0.2,
background 2), times pyEIT's `JAC.setup(p=0.25, lamb=1.0, method="lm")` + `gn(v1, lamb_decay=0.1,
lamb_min=1e-5, maxiter=20)`, writes the mesh and v1 to a folder and runs `bench_gn` (eitstream, same
calls, pyEIT-compat mode) on it; prints both times, the ratio, eitstream's per-iteration split, the
live rate (warm-started frames/s) and how far eitstream's final sigma is from pyEIT's.

    bench_gn_vs_pyeit.py --bench-gn build/bench_gn [--cases 16:0.1,64:0.05] [--out result.json]
                         [--no-pyeit]   (eitstream only, e.g. on a machine without pyEIT)
"""
import argparse, json, os, subprocess, sys, tempfile, time

import numpy as np


def make_case(n_el, h0, folder, run_pyeit, iterations):
    import pyeit.mesh as pmesh
    import pyeit.eit.jac as jac
    import pyeit.eit.protocol as protocol
    from pyeit.eit.fem import EITForward
    from pyeit.mesh.wrapper import PyEITAnomaly_Circle
    mesh_obj = pmesh.create(n_el, h0=h0)
    anomaly = [PyEITAnomaly_Circle(center=[0.4, 0.4], r=0.2, perm=10.0),
               PyEITAnomaly_Circle(center=[-0.4, -0.4], r=0.2, perm=0.1)]
    mesh_new = pmesh.set_perm(mesh_obj, anomaly=anomaly, background=2.0)
    proto = protocol.create(n_el, dist_exc=1, step_meas=1, parser_meas="std")
    v1 = np.real(EITForward(mesh_obj, proto).solve_eit(perm=mesh_new.perm))
    os.makedirs(folder, exist_ok=True)
    w = lambda name, a, fmt="%.17g": np.savetxt(f"{folder}/{name}.csv", np.atleast_1d(a), delimiter=",", fmt=fmt)
    w("nodes", mesh_obj.node); w("elements", mesh_obj.element, "%d"); w("el_pos", mesh_obj.el_pos, "%d"); w("v1", v1)
    json.dump({"ref_node": int(mesh_obj.ref_node)}, open(f"{folder}/info.json", "w"))
    out = dict(n_el=n_el, h0=h0, n_nodes=int(mesh_obj.node.shape[0]), n_elems=int(mesh_obj.element.shape[0]),
               n_meas=int(v1.size))
    if run_pyeit:
        eit = jac.JAC(mesh_obj, proto)
        t = time.perf_counter(); eit.setup(p=0.25, lamb=1.0, method="lm"); out["pyeit_setup_s"] = time.perf_counter() - t
        t = time.perf_counter()
        x = None
        for x in eit.gn(v1, lamb_decay=0.1, lamb_min=1e-5, maxiter=iterations, generator=True):
            pass
        out["pyeit_gn_s"] = time.perf_counter() - t
        np.savetxt(f"{folder}/pyeit_final.csv", np.real(np.asarray(x, dtype=complex)), fmt="%.17g")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench-gn", required=True)
    ap.add_argument("--cases", default="16:0.1,64:0.05")
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--live-frames", type=int, default=200)
    ap.add_argument("--no-pyeit", action="store_true")
    ap.add_argument("--out")
    a = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in a.cases.split(","):
            n_el, h0 = int(case.split(":")[0]), float(case.split(":")[1])
            folder = os.path.join(tmp, f"gn_{n_el}_{h0}")
            r = make_case(n_el, h0, folder, not a.no_pyeit, a.iterations)
            live = a.live_frames if n_el <= 16 else max(5, a.live_frames // 20)
            cmd = [a.bench_gn, folder, "--iterations", str(a.iterations), "--repeat", str(a.repeat),
                   "--live-frames", str(live), "--frame-iterations", "3",
                   "--sigma-out", os.path.join(folder, "eitstream_final.csv")]
            ours = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            r["eitstream"] = ours
            if not a.no_pyeit:
                r["speedup"] = r["pyeit_gn_s"] / ours["seconds"]
                mine = np.loadtxt(os.path.join(folder, "eitstream_final.csv"))
                theirs = np.loadtxt(os.path.join(folder, "pyeit_final.csv"))
                r["final_sigma_rel_diff"] = float(np.linalg.norm(mine - theirs) / np.linalg.norm(theirs))
            results.append(r)
            sp = f"{r['pyeit_gn_s']:8.2f} s pyEIT   {r['speedup']:7.1f}x" if "speedup" in r else "(pyEIT not run)"
            s = ours["per_iteration_ms"]
            print(f"{n_el:3d} el h0 {h0:<5} {r['n_nodes']:5d} nodes {r['n_elems']:5d} tri {r['n_meas']:5d} meas ({ours.get('n_rows', '?')} distinct rows of J) | "
                  f"{ours['iterations']} it: eitstream {ours['seconds']:8.4f} s  {sp} | per it ms: fwd {s['forward']:.2f} "
                  f"jac {s['jacobian']:.2f} sys {s['system']:.2f} solve {s['solve']:.2f} | live {ours['frame_iterations']} it/frame "
                  f"{ours['live_fps']:.1f} frames/s" + (f" | final σ vs pyEIT {r['final_sigma_rel_diff']:.1e}"
                                                if "final_sigma_rel_diff" in r else ""), flush=True)
    if a.out:
        json.dump(results, open(a.out, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
