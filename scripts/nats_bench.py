#!/usr/bin/env python3
"""Many beds through one nats-server and `eitstream worker`s (docs/benchmarks.md, "NATS").

Starts a `nats-server -js` on a free loopback port (killed at the end, also on failure), K
workers, and plays N simulated beds at F frames/s: every tick one raw frame per bed (eitstream's
ingest framing, 208 float32 values, device_time = CLOCK_MONOTONIC ns) is published to
eit.bench.<bed>.raw. A subscriber on eit.bench.*.img counts the images per bed and takes the
latency device -> viewer from each image header's t_device_ns (same host). Prints frames/s in and
out, images missing, latency p50/p99, and the CPU of the server, each worker and the driver.

With --driver build/bench_nats_beds (the default when it exists) the beds and the viewer are that
C++ program (tools/bench/bench_nats_beds.cpp); --driver python keeps the asyncio one below, which
could not offer more than ~7 k frames/s on the loaded 2-core machine.

  python3 scripts/nats_bench.py --eitstream build/eitstream --beds 200 --fps 50 --workers 2
"""
import argparse
import asyncio
import os
import resource
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import zlib

import nats

HEADER = struct.Struct("<4sBBHQqIHHII")  # docs/protocol.md, ingest framing (40 bytes)


def frame(seq, t_ns, payload):
    head = HEADER.pack(b"EITF", 1, 1, 40, seq, t_ns, len(payload) // 4, 1, 0,
                       zlib.crc32(payload), 0)
    return head[:36] + struct.pack("<I", zlib.crc32(head[:36])) + payload


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def bench(a, url):
    nc = await nats.connect(url)
    received = {}
    latencies = []

    async def on_image(msg):
        t = time.monotonic_ns()
        bed = msg.subject.split(".")[2]
        received[bed] = received.get(bed, 0) + 1
        t_device = struct.unpack_from("<q", msg.data, 56)[0]
        latencies.append(t - t_device)

    await nc.subscribe("eit.bench.*.img", cb=on_image)
    payload = struct.pack("<208f", *[1.0 + 0.001 * i for i in range(208)])
    period = 1.0 / a.fps
    start = time.monotonic()
    sent = 0
    late_ticks = 0
    ticks = int(a.seconds * a.fps)
    for k in range(ticks):
        due = start + k * period
        now = time.monotonic()
        if due > now:
            await asyncio.sleep(due - now)
        elif now - due > period:
            late_ticks += 1
        t_ns = time.monotonic_ns()
        for b in range(a.beds):
            await nc.publish(f"eit.bench.{b}.raw", frame(k, t_ns, payload))
        sent += a.beds
    send_s = time.monotonic() - start
    deadline = time.monotonic() + a.drain
    while sum(received.values()) < sent and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    got = sum(received.values())
    await nc.close()
    latencies.sort()
    q = lambda p: latencies[min(len(latencies) - 1, int(p * len(latencies)))] / 1e6 if latencies else float("nan")
    return dict(sent=sent, send_s=send_s, got=got, late_ticks=late_ticks,
                p50=q(0.5), p99=q(0.99), max=q(1.0))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--eitstream", default="build/eitstream")
    p.add_argument("--beds", type=int, default=200)
    p.add_argument("--fps", type=float, default=50)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--drain", type=float, default=10, help="seconds to wait for the last images")
    p.add_argument("--driver", default=None,
                   help="the C++ driver (default build/bench_nats_beds beside --eitstream), or 'python'")
    a = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="eit-nats-bench-")
    procs = []
    try:
        port = free_port()
        url = f"nats://127.0.0.1:{port}"
        server = subprocess.Popen(["nats-server", "-js", "-a", "127.0.0.1", "-p", str(port),
                                   "-sd", f"{tmp}/store", "-l", f"{tmp}/server.log"])
        procs.append(server)
        os.makedirs(f"{tmp}/models")
        subprocess.run([a.eitstream, "model", "build", "-o", f"{tmp}/models/default.h5"],
                       check=True, stdout=subprocess.DEVNULL)
        workers = [subprocess.Popen([a.eitstream, "worker", url + "?site=bench", "--model-dir",
                                     f"{tmp}/models", "--since", "new", "--status-interval", "0",
                                     "--id", f"bench{i}"], stdout=subprocess.PIPE, text=True)
                   for i in range(a.workers)]
        procs += workers
        # Let the beds appear (one frame each) and the workers take them before measuring.
        async def prime():
            nc = await nats.connect(url)
            payload = struct.pack("<208f", *([1.0] * 208))
            js = nc.jetstream()
            for b in range(a.beds):
                await js.publish(f"eit.bench.{b}.raw", frame(0, time.monotonic_ns(), payload))
            await nc.close()
        driver = a.driver or os.path.join(os.path.dirname(a.eitstream) or ".", "bench_nats_beds")
        use_cpp = driver != "python"
        time.sleep(1.0)
        if use_cpp:
            subprocess.run([driver, url, "--beds", str(a.beds), "--prime"], check=True,
                           stdout=subprocess.DEVNULL)
        else:
            asyncio.run(prime())
        time.sleep(6.0)
        load_before = os.getloadavg()[0]
        cpu0 = {pr.pid: cpu_s(pr.pid) for pr in procs}
        t0 = time.monotonic()
        children0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        pt0 = time.process_time()
        if use_cpp:
            dp = subprocess.Popen([driver, url, "--beds", str(a.beds), "--fps", str(a.fps),
                                   "--seconds", str(a.seconds), "--drain", str(a.drain)],
                                  stdout=subprocess.PIPE, text=True)
            out = dp.communicate()[0]
            if dp.returncode != 0:
                raise SystemExit(f"driver failed ({dp.returncode})")
            kv = dict(line.split("=", 1) for line in out.split() if "=" in line)
            r = dict(sent=int(kv["sent"]), send_s=float(kv["send_s"]), got=int(kv["received"]),
                     late_ticks=int(kv["late_ticks"]), p50=float(kv["p50_ms"]),
                     p99=float(kv["p99_ms"]), max=float(kv["max_ms"]))
        else:
            r = asyncio.run(bench(a, url))
        wall = time.monotonic() - t0
        cpu = {pr.pid: (cpu_s(pr.pid) - cpu0[pr.pid]) / wall for pr in procs}
        children1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        # The C++ driver is a waited-for child; the Python one is this process.
        driver_cpu = ((children1.ru_utime + children1.ru_stime - children0.ru_utime - children0.ru_stime)
                      if use_cpp else time.process_time() - pt0) / wall
        print(f"beds {a.beds} x {a.fps:g} frames/s, {a.workers} worker(s), {a.seconds:g} s, driver "
              f"{'C++' if use_cpp else 'Python'} (load average before: {load_before:.1f}, "
              f"after: {os.getloadavg()[0]:.1f})")
        print(f"raw frames sent {r['sent']} in {r['send_s']:.2f} s = {r['sent'] / r['send_s']:.0f}/s "
              f"(late ticks {r['late_ticks']}); images received {r['got']} "
              f"({r['sent'] - r['got']} missing after {a.drain:g} s drain)")
        print(f"latency device -> viewer p50 {r['p50']:.1f} ms, p99 {r['p99']:.1f} ms, "
              f"max {r['max']:.1f} ms")
        print(f"CPU (cores, over {wall:.1f} s): nats-server {cpu[server.pid]:.2f}; workers "
              + ", ".join(f"{cpu[w.pid]:.2f}" for w in workers)
              + f"; driver {driver_cpu:.2f}"
              + f"; per bed {sum(cpu[w.pid] for w in workers) / a.beds * 100:.2f} % of a core (workers)"
              + f" + {cpu[server.pid] / a.beds * 100:.2f} % (server)")
        for w in workers:
            w.send_signal(signal.SIGINT)
        for w in workers:
            out, _ = w.communicate(timeout=30)
            print(out.strip().splitlines()[-1] if out.strip() else "(worker printed nothing)")
    finally:
        for pr in procs:
            if pr.poll() is None:
                pr.kill()
                pr.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
