#!/usr/bin/env python3
"""Is `eitstream reconstruct` held back by the disk or by our HDF5 writing? The same volume of
1024-float32 images (the built-in model's), written to each directory five ways, side by side:

  dd        dd if=/dev/zero bs=1M of the same byte count (the raw rate of that place)
  fwrite    bench_h5_write --mode fwrite: the image bytes in 1 MiB fwrite calls
  h5py      h5py: one contiguous float32 [n, 1024] dataset, written in 64 MiB slabs
  ours      bench_h5_write --mode image: sinks::Hdf5ImageRecorder, frame by frame, as reconstruct
            and `run --record` use it (SWMR, chunked, per-frame seq/time columns); with
            --tick-flush also with whole chunks flushed for SWMR readers only at tick()
            (reconstruct's setting, "tick" rows)

Each way runs --rounds times, interleaved; printed are the medians of the rate (GB/s) and of
the CPU time per GB (user + system of the writing process: steady when other work shares the
machine, where wall-clock rates swing), each with its ratio to fwrite's median in the same
directory (compare ratios, not absolute rates). With --fsync each timing includes an fsync of the
file (the device, not only the page cache).

    python3 tools/bench/bench_h5_write.py --bench build/bench_h5_write --dirs /dev/shm /tmp

Needs numpy and h5py for the h5py row (skipped with a message otherwise). Exit status 0 whatever
the ratios: a measurement, not a test.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

WIDTH = 1024


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_dd(path, n_bytes, fsync):
    mib = n_bytes // (1 << 20)
    cmd = ["dd", "if=/dev/zero", f"of={path}", "bs=1M", f"count={mib}", "status=none"]
    if fsync:
        cmd.append("conv=fsync")
    c0, t0 = children_cpu(), time.perf_counter()
    subprocess.run(cmd, check=True)
    s, cpu = time.perf_counter() - t0, children_cpu() - c0
    size = os.path.getsize(path)
    os.remove(path)
    return size, s, cpu


def run_bench(bench, path, frames, mode, chunk, fsync, chunk_flush=True):
    cmd = [bench, path, "--mode", mode, "--frames", str(frames), "--chunk", str(chunk)]
    if fsync:
        cmd.append("--fsync")
    if not chunk_flush:
        cmd.append("--no-chunk-flush")
    r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return r["bytes"], r["seconds"], r["cpu_seconds"]


# Run as its own process (like the others); times only the write, not Python's start-up.
H5PY_WRITER = """
import json, os, sys, time
import h5py, numpy as np
path, frames, width, fsync = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
slab_rows = (64 << 20) // (4 * width)
block = (np.arange(slab_rows * width, dtype=np.float32) * 1e-6).reshape(slab_rows, width)
t0, c0 = time.perf_counter(), time.process_time()
with h5py.File(path, "w") as f:
    d = f.create_dataset("images", (frames, width), dtype="f4")
    for start in range(0, frames, slab_rows):
        n = min(slab_rows, frames - start)
        d[start:start + n] = block[:n]
if fsync:
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
s, cpu = time.perf_counter() - t0, time.process_time() - c0
size = os.path.getsize(path)
os.remove(path)
print(json.dumps({"bytes": size, "seconds": s, "cpu_seconds": cpu}))
"""


def run_h5py(path, frames, fsync):
    out = subprocess.run([sys.executable, "-c", H5PY_WRITER, path, str(frames), str(WIDTH),
                          "1" if fsync else "0"], check=True, capture_output=True, text=True)
    r = json.loads(out.stdout)
    return r["bytes"], r["seconds"], r["cpu_seconds"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", default="build/bench_h5_write")
    ap.add_argument("--dirs", nargs="+", default=["/dev/shm", "/tmp"])
    ap.add_argument("--frames", type=int, default=400000)
    ap.add_argument("--chunks", type=int, nargs="+", default=[256],
                    help="chunk rows for the 'ours' rows (one row per value)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--fsync", action="store_true")
    ap.add_argument("--tick-flush", action="store_true",
                    help="also ours with SWMR flushes at tick() only (reconstruct's setting)")
    ap.add_argument("--compare-bench", metavar="PATH",
                    help="another build of bench_h5_write (e.g. of main) as its own row per chunk")
    a = ap.parse_args()
    have_h5py = subprocess.run([sys.executable, "-c", "import h5py"],
                               capture_output=True).returncode == 0
    if not have_h5py:
        print("h5py not importable: the h5py row is skipped", file=sys.stderr)

    n_bytes = a.frames * WIDTH * 4
    print(f"{a.frames} frames × {WIDTH} float32 = {n_bytes / 1e9:.2f} GB per write, "
          f"{a.rounds} rounds, fsync {'on' if a.fsync else 'off'}; medians, and ratios to "
          "fwrite's median in the same directory (rate: higher is faster; CPU s/GB: lower is "
          "cheaper)")
    for d in a.dirs:
        path = os.path.join(d, f"bench_h5_write_{os.getpid()}.bin")
        ways = {"dd": lambda: run_dd(path, n_bytes, a.fsync),
                "fwrite": lambda: run_bench(a.bench, path, a.frames, "fwrite", 0, a.fsync)}
        if have_h5py:
            ways["h5py (one dataset)"] = lambda: run_h5py(path, a.frames, a.fsync)
        for c in a.chunks:
            ways[f"ours (chunk {c})"] = (
                lambda c=c: run_bench(a.bench, path, a.frames, "image", c, a.fsync))
            if a.tick_flush:
                ways[f"ours (chunk {c}, tick)"] = (
                    lambda c=c: run_bench(a.bench, path, a.frames, "image", c, a.fsync, False))
            if a.compare_bench:
                ways[f"compared (chunk {c})"] = (
                    lambda c=c: run_bench(a.compare_bench, path, a.frames, "image", c, a.fsync))
        rates = {k: [] for k in ways}
        cpus = {k: [] for k in ways}
        for _ in range(a.rounds):
            for k, f in ways.items():
                size, s, cpu = f()
                rates[k].append(size / s)
                cpus[k].append(cpu / (size / 1e9))
        ref_rate = statistics.median(rates["fwrite"])
        ref_cpu = statistics.median(cpus["fwrite"])
        print(f"\n{d}")
        print(f"  {'way':20s} {'GB/s':>6s} {'×fwrite':>8s} {'CPU s/GB':>9s} {'×fwrite':>8s}"
              "   rounds (GB/s)")
        for k in ways:
            m, c = statistics.median(rates[k]), statistics.median(cpus[k])
            print(f"  {k:20s} {m / 1e9:6.2f} {m / ref_rate:8.2f} {c:9.3f} {c / ref_cpu:8.2f}   "
                  + " ".join(f"{x / 1e9:.2f}" for x in rates[k]))


if __name__ == "__main__":
    main()
