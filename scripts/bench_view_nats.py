#!/usr/bin/env python3
"""`eitstream view` following a bed through NATS against the same view on ZeroMQ, in one run:
one `eitstream run` publishes to both (--publish nats://… and --endpoint tcp://…) for --seconds at
--fps; two `eitstream view` processes (one per transport) count what reached them (/api/state)
and their CPU time is read from /proc. Prints images received against images published and the
CPU ratio NATS / ZeroMQ (the reference). Needs nats-server; exits 77 without it.

    scripts/bench_view_nats.py --eitstream build/eitstream --fps 1000 --seconds 10
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_view(eitstream, endpoint, http_port, seconds):
    return subprocess.Popen([eitstream, "view", endpoint, "--http", f"127.0.0.1:{http_port}",
                             "--duration", str(seconds + 30)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def images(http_port):
    with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/api/state", timeout=5) as r:
        return json.load(r)["source"]["endpoints"][0]["images"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--eitstream", default="build/eitstream")
    ap.add_argument("--fps", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=10)
    a = ap.parse_args()
    server_bin = shutil.which("nats-server") or "/usr/sbin/nats-server"
    if not os.access(server_bin, os.X_OK):
        print("SKIPPED: nats-server is not installed")
        return 77
    store = tempfile.mkdtemp(prefix="eit-bench-view-nats-")
    port, zmq_port = free_port(), free_port()
    server = subprocess.Popen([server_bin, "-js", "-a", "127.0.0.1", "-p", str(port), "-sd", store],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    views = []
    try:
        time.sleep(0.5)
        bed = f"nats://127.0.0.1:{port}?site=bench&bed=1"
        # The streams exist before the views start: a live view starts at its subscription.
        subprocess.run([a.eitstream, "run", "--publish", bed, "--endpoint", "tcp://127.0.0.1:*",
                        "--frames", "5", "--quiet"], check=True, capture_output=True)
        nats_http, zmq_http = free_port(), free_port()
        views = [start_view(a.eitstream, bed, nats_http, a.seconds),
                 start_view(a.eitstream, f"tcp://127.0.0.1:{zmq_port}", zmq_http, a.seconds)]
        time.sleep(1.5)
        cpu0 = [cpu_seconds(v.pid) for v in views]
        run = subprocess.run([a.eitstream, "run", "--publish", bed, "--endpoint",
                              f"tcp://127.0.0.1:{zmq_port}", "--fps", str(a.fps), "--duration",
                              str(a.seconds)], check=True, capture_output=True, text=True)
        time.sleep(2)
        cpu = [cpu_seconds(v.pid) - c for v, c in zip(views, cpu0)]
        got = [images(nats_http), images(zmq_http)]
        m = re.search(r"nats (\d+) acked", run.stdout)
        published = int(m.group(1)) if m else -1
        print(f"{a.fps} frames/s for {a.seconds:g} s, {published} images stored in JetStream: "
              f"NATS view {got[0]} images, {cpu[0]:.2f} s CPU ({1e6 * cpu[0] / max(got[0], 1):.0f} "
              f"µs/image); ZeroMQ view {got[1]} images, {cpu[1]:.2f} s CPU "
              f"({1e6 * cpu[1] / max(got[1], 1):.0f} µs/image); CPU per image NATS / ZeroMQ "
              f"{(cpu[0] / max(got[0], 1)) / max(cpu[1] / max(got[1], 1), 1e-9):.2f}")
        return 0
    finally:
        for p in (*views, server):
            p.terminate()
            p.wait()
        shutil.rmtree(store, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
