#!/usr/bin/env python3
"""Times pyEIT on the frames eitstream bench streams: per frame, a pyEIT `solve` (JAC and GREIT)
plus a pyzmq publish of the image (topic, a 112-byte header like eitstream's, float32 payload) to
a subscriber in another process over tcp loopback, in a plain Python loop — once paced at --rate
(latency from "frame in" to "image sent", as eitstream's received→sent) and once back to back
(frames/s, as eitstream's runs at max).

Called by `eitstream bench --compare-pyeit`, which prints the result next to eitstream's own runs
on the same frames and matrix shapes. Standalone:

    bench_vs_pyeit.py --frames frames.npy --out result.json [--algorithms jac,greit] [--h0 0.1]

frames.npy: float64 [N, 208] (16 electrodes, adjacent drive and measurement, pyEIT's order); row 0
is also used as the reference v0. Exit code 3 (and a line on stderr) when pyeit or pyzmq is
missing, so the caller can skip with that message.
"""
import argparse
import importlib.metadata
import json
import os
import struct
import subprocess
import sys
import time

HEADER = struct.Struct("<IHHBBHIIIQQqqqII32sq")  # eitstream ImageHeader layout, 112 bytes
assert HEADER.size == 112
MAGIC = 0x49544945


def subscribe(endpoint):
    """Child mode: receive until the end message, then print how many images arrived."""
    import zmq

    ctx = zmq.Context()
    sock = ctx.socket(zmq.SUB)
    sock.setsockopt(zmq.RCVHWM, 100000)
    sock.setsockopt(zmq.SUBSCRIBE, b"eit/pyeit/")
    sock.connect(endpoint)
    time.sleep(0.15)
    print("ready", flush=True)
    images = 0
    while True:
        parts = sock.recv_multipart()
        if parts[0].endswith(b"/end"):
            break
        images += 1
    print(images, flush=True)


def build(algorithm, h0):
    import numpy as np
    from pyeit.eit import greit, jac
    import pyeit.eit.protocol as protocol
    import pyeit.mesh as mesh

    mesh_obj = mesh.create(16, h0=h0)
    proto = protocol.create(16, dist_exc=1, step_meas=1, parser_meas="std")
    if algorithm == "jac":
        solver = jac.JAC(mesh_obj, proto)
        solver.setup(p=0.5, lamb=0.01, method="kotre", perm=1, jac_normalized=True)
    elif algorithm == "greit":
        solver = greit.GREIT(mesh_obj, proto)
        solver.setup(p=0.50, lamb=0.01, perm=1, jac_normalized=True)
    else:
        raise SystemExit(f"bench_vs_pyeit: unknown algorithm '{algorithm}' (jac, greit)")
    return solver, np.asarray(solver.H).shape


def time_loop(algorithm, solver, frames, pub, topic, rate):
    """Per frame: (paced) wait for the frame's scheduled time, then solve and publish. Returns the
    per-frame times from 'frame in' (the loop has the frame) to 'image sent', and the loop's
    total time. rate 0: back to back, as fast as it goes."""
    import numpy as np

    v0 = frames[0]
    header = bytearray(HEADER.size)
    per_frame = np.empty(len(frames), dtype=np.int64)
    period = int(1e9 / rate) if rate > 0 else 0
    start = time.perf_counter_ns()
    for i, v in enumerate(frames):
        if period:
            due = start + i * period
            # Sleep until due, as a loop waiting for its device would block (no spinning: eitstream's
            # stages do not spin while idle either).
            while (left := due - time.perf_counter_ns()) > 0:
                time.sleep(left * 1e-9)
        t0 = time.perf_counter_ns()
        ds = solver.solve(v, v0, normalize=True)
        img = np.ascontiguousarray(np.real(ds), dtype=np.float32)
        HEADER.pack_into(header, 0, MAGIC, 1, 112, 1, 1, 0, img.size, 1, 0, i, 1, t0, 0, 0, 0,
                         img.size, algorithm.encode(), 0)
        pub.send_multipart([topic, header, img], copy=False)
        per_frame[i] = time.perf_counter_ns() - t0
    total = time.perf_counter_ns() - start
    return per_frame, total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames")
    ap.add_argument("--out")
    ap.add_argument("--algorithms", default="jac,greit")
    ap.add_argument("--h0", type=float, default=0.1, help="pyEIT mesh size (0.1: 686 triangles)")
    ap.add_argument("--rate", type=float, default=1000,
                    help="frames/s of the paced loop that measures latency (the throughput loop "
                         "runs back to back)")
    ap.add_argument("--subscribe", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.subscribe:
        return subscribe(args.subscribe)
    if not args.frames or not args.out:
        ap.error("--frames and --out are required")
    try:
        import numpy as np
        import pyeit
        import zmq
    except ImportError as e:
        print(f"bench_vs_pyeit: {e.name} is not installed (pip install pyeit pyzmq)", file=sys.stderr)
        return 3

    frames = np.load(args.frames).astype(np.float64)
    if frames.ndim != 2 or frames.shape[1] != 208:
        raise SystemExit(f"bench_vs_pyeit: {args.frames} has shape {frames.shape}, expected (N, 208)")
    ctx = zmq.Context()
    pub = ctx.socket(zmq.PUB)
    pub.setsockopt(zmq.SNDHWM, 1000)
    port = pub.bind_to_random_port("tcp://127.0.0.1")
    endpoint = f"tcp://127.0.0.1:{port}"
    child = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--subscribe", endpoint],
                             stdout=subprocess.PIPE, text=True)
    if child.stdout.readline().strip() != "ready":
        raise SystemExit("bench_vs_pyeit: the subscriber process did not start")
    time.sleep(0.1)

    results = []
    for algorithm in [a for a in args.algorithms.split(",") if a]:
        t_setup = time.perf_counter()
        solver, shape = build(algorithm, args.h0)
        setup_s = time.perf_counter() - t_setup
        topic = b"eit/pyeit/img"
        time_loop(algorithm, solver, frames[: min(50, len(frames))], pub, topic, 0)  # warm-up
        per_frame, _ = time_loop(algorithm, solver, frames, pub, topic, args.rate)
        _, total = time_loop(algorithm, solver, frames, pub, topic, 0)
        results.append({
            "name": f"pyeit-{algorithm}",
            "what": f"pyEIT {algorithm.upper()} solve (H {shape[0]}x{shape[1]}, float64, "
                    f"normalize) + pyzmq publish over tcp; latency paced at {args.rate:g} "
                    f"frames/s, frames/s back to back",
            "n_out": int(shape[0]),
            "n_meas": int(shape[1]),
            "setup_s": setup_s,
            "rate_hz": args.rate,
            "total_ns": int(total),
            "per_frame_ns": [int(x) for x in per_frame],
        })
    pub.send_multipart([b"eit/pyeit/end", b""])
    try:
        out, _ = child.communicate(timeout=10)
        received = int(out.strip() or 0)
    except subprocess.TimeoutExpired:
        child.kill()
        received = -1
    versions = {
        "python": sys.version.split()[0],
        "pyeit": importlib.metadata.version("pyeit"),
        "pyzmq": zmq.__version__,
        "numpy": np.__version__,
    }
    with open(args.out, "w") as f:
        json.dump({"versions": versions, "frames": len(frames), "subscriber_received": received,
                   "results": results}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
