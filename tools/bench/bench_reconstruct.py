#!/usr/bin/env python3
"""`eitstream reconstruct` against the backend's batched throughput from `eitstream bench`,
side by side on the same machine at the same time.

Writes a raw float32 recording of N frames of 208 values (the built-in 1024 × 208 GREIT model's
measurement count), then alternates, `--rounds` times:
  1. eitstream bench --rate max --batch B --transport inproc --backend X   (delivered frames/s)
  2. eitstream reconstruct rec.f32 --batch B --backend X -o out.h5          (whole job frames/s)
and prints each pair and the ratio of the medians. The whole job includes reading the recording,
the three-thread overlap and writing the HDF5 image file; reconstruct's own "compute" figure (the
backend's busy time) is printed beside it. On a machine shared with other work the wall-clock
figures swing with the load, so CPU time per frame is printed too: bench's whole process
(set-up and warm-up included) against the sum of reconstruct's three threads.

    python3 tools/bench/bench_reconstruct.py --eitstream build/eitstream --backend cpu
    python3 tools/bench/bench_reconstruct.py --eitstream build-cuda/eitstream --backend cuda \\
        --frames 400000

Python's standard library only. Exit status 0 whatever the ratio: a measurement, not a test.
"""
import argparse
import array
import json
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile


def write_recording(path, n_frames, n_meas=208):
    """n_frames of n_meas float32 values around 1: 256 distinct random frames, repeated (what the
    values are does not change the cost of a GEMM)."""
    rng = random.Random(1)
    block = array.array("f", (1 + 0.05 * rng.gauss(0, 1) for _ in range(256 * n_meas)))
    with open(path, "wb") as f:
        for start in range(0, n_frames, 256):
            rows = min(256, n_frames - start)
            f.write(block[:rows * n_meas].tobytes())


def children_cpu_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def bench_fps(exe, backend, batch, frames, workdir):
    """(delivered frames/s, process CPU seconds per frame incl. warm-up and set-up)"""
    out = os.path.join(workdir, "bench.json")
    cpu0 = children_cpu_s()
    subprocess.run([exe, "bench", "--rate", "max", "--batch", str(batch), "--frames", str(frames),
                    "--warmup", "1000", "--transport", "inproc", "--backend", backend, "--quiet",
                    "--force", "--json", out], check=True, stdout=subprocess.DEVNULL)
    cpu = children_cpu_s() - cpu0
    with open(out) as f:
        run = json.load(f)["runs"][0]
    return run["delivered_fps"], cpu / run["frames"]["total"]


def reconstruct_fps(exe, backend, batch, rec, workdir):
    out = os.path.join(workdir, "images.h5")
    p = subprocess.run([exe, "reconstruct", rec, "--values-per-frame", "208", "--batch",
                        str(batch), "--backend", backend, "--reference", "frame:0", "--quiet", "--force",
                        "-o", out], check=True, capture_output=True, text=True)
    m = re.search(r"\(([\d.]+) frames/s; busy: read ([\d.]+) s, compute ([\d.]+) s = ([\d.]+) "
                  r"frames/s, write ([\d.]+) s", p.stdout)
    if not m:
        sys.exit(f"cannot parse reconstruct's summary: {p.stdout!r}")
    backend_line = next((l for l in p.stderr.splitlines() if "backend" in l), "")
    c = re.search(r"thread CPU: read ([\d.]+) s, compute ([\d.]+) s, write ([\d.]+) s", p.stdout)
    n = int(re.search(r": (\d+) frames →", p.stdout).group(1))
    cpu = [float(x) for x in c.groups()]
    return {"cpu_per_frame": sum(cpu) / n, "compute_cpu_per_frame": cpu[1] / n,"fps": float(m.group(1)), "read_s": float(m.group(2)),
            "compute_s": float(m.group(3)), "compute_fps": float(m.group(4)),
            "write_s": float(m.group(5)), "backend": backend_line}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eitstream", default="build/eitstream")
    ap.add_argument("--backend", default="cpu", help="cpu | cuda | auto (both commands)")
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--frames", type=int, default=100000, help="frames in the recording")
    ap.add_argument("--bench-frames", type=int, default=50000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workdir", default=None, help="where the recording and image file go")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=a.workdir) as d:
        rec = os.path.join(d, "rec.f32")
        write_recording(rec, a.frames)
        try:
            load = os.getloadavg()[0]
        except OSError:
            load = float("nan")
        print(f"recording {a.frames} frames × 208 float32 ({os.path.getsize(rec) / 1e6:.0f} MB); "
              f"backend {a.backend}, batch {a.batch}; load average {load:.1f} on "
              f"{os.cpu_count()} cores")
        benches, recs, b_cpus = [], [], []
        for i in range(a.rounds):
            b, b_cpu = bench_fps(a.eitstream, a.backend, a.batch, a.bench_frames, d)
            r = reconstruct_fps(a.eitstream, a.backend, a.batch, rec, d)
            benches.append(b)
            recs.append(r)
            if i == 0:
                print(r["backend"])
            print(f"round {i + 1}: bench {b:10.0f} frames/s | reconstruct {r['fps']:10.0f} frames/s "
                  f"({r['fps'] / b:5.1%}); busy read {r['read_s']:.2f} s, compute "
                  f"{r['compute_s']:.2f} s ({r['compute_fps']:.0f} frames/s), write "
                  f"{r['write_s']:.2f} s")
            print(f"         CPU per frame: bench process {b_cpu * 1e6:.1f} µs | reconstruct's "
                  f"three threads {r['cpu_per_frame'] * 1e6:.1f} µs (compute thread "
                  f"{r['compute_cpu_per_frame'] * 1e6:.1f} µs = "
                  f"{1 / r['compute_cpu_per_frame']:.0f} frames per CPU-second)")
            b_cpus.append(b_cpu)
        mb = statistics.median(benches)
        mr = statistics.median(r["fps"] for r in recs)
        mc = statistics.median(r["compute_fps"] for r in recs)
        print(f"median: bench {mb:.0f} frames/s, reconstruct {mr:.0f} frames/s = {mr / mb:.1%} "
              f"of bench (reconstruct's compute alone {mc:.0f} frames/s = {mc / mb:.1%})")
        rc = statistics.median(r["cpu_per_frame"] for r in recs)
        bc = statistics.median(b_cpus)
        print(f"median CPU per frame: bench {bc * 1e6:.1f} µs, reconstruct {rc * 1e6:.1f} µs "
              f"(frames per CPU-second: reconstruct / bench = {bc / rc:.0%})")


if __name__ == "__main__":
    main()
