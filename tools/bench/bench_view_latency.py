#!/usr/bin/env python3
"""Display-latency benchmark of the live view: frame acquired → drawn in a real headless Chromium.

For each rate (frames/s) and number of browsers, starts `eitstream run --http 127.0.0.1:0`
streaming the synthetic phantom, opens that many headless Chromium pages, lets them warm up,
resets the server's counters, then reads GET /api/stats after the measuring window. The pages
report {seq, paint time} over the WebSocket; the server compares it with the frame's acquisition
time on the same host's clock. Prints a Markdown table (docs/benchmarks.md) with the aim
(p99 ≤ one frame period + 20 ms at 50 frames/s; at high rates every drawn frame at most 2
display frames old) and the ratio of each p99 to it.

    python3 tools/bench/bench_view_latency.py --eitstream build/eitstream --seconds 10
"""
import argparse
import json
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request


def start_run(binary, fps):
    p = subprocess.Popen([binary, "run", "--http", "127.0.0.1:0", "--endpoint", "tcp://127.0.0.1:*",
                          "--fps", str(fps), "--duration", "600", "--quiet"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    found = {}
    ready = threading.Event()

    def read():
        for line in p.stderr:
            m = re.search(r"live view: http://127\.0\.0\.1:(\d+)/", line)
            if m:
                found["port"] = int(m.group(1))
                ready.set()
    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(60):
        p.kill()
        sys.exit("eitstream run did not print the live view's address")
    return p, found["port"]


def browser(url):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    o = webdriver.ChromeOptions()
    o.binary_location = shutil.which("chromium")
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,760",
              "--force-device-scale-factor=1", "--disable-background-timer-throttling",
              "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows"):
        o.add_argument(a)
    d = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=o)
    d.get(url)
    return d


def http(port, path, method="GET"):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method)
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


def measure(binary, fps, n_browsers, seconds, warmup):
    run, port = start_run(binary, fps)
    drivers = []
    try:
        drivers = [browser(f"http://127.0.0.1:{port}/") for _ in range(n_browsers)]
        time.sleep(warmup)
        http(port, "/api/stats/reset", "POST")
        time.sleep(seconds)
        s = http(port, "/api/stats")
        for d in drivers:
            s.setdefault("page_fps", []).append(float(d.find_element("id", "fps").text or 0))
        return s
    finally:
        for d in drivers:
            d.quit()
        run.send_signal(2)
        run.wait(20)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--eitstream", default="build/eitstream")
    ap.add_argument("--rates", default="50,1000")
    ap.add_argument("--browsers", default="1,4")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--warmup", type=float, default=4)
    a = ap.parse_args()
    rows = []
    for fps in [int(v) for v in a.rates.split(",")]:
        for n in [int(v) for v in a.browsers.split(",")]:
            s = measure(a.eitstream, fps, n, a.seconds, a.warmup)
            lat = s["display_latency_ms"]
            painted = [b["painted_per_s"] for b in s["browsers"]]
            skipped = sum(b["images_skipped"] for b in s["browsers"])
            sent = sum(b["images_sent"] for b in s["browsers"])
            refresh = max(painted) if fps > 70 else 60.0
            aim = 1000 / fps + 20 if fps <= 70 else 2 * 1000 / max(refresh, 1)
            rows.append((fps, n, lat["count"], lat["p50"], lat["p99"], lat["max"], aim,
                         lat["p99"] / aim, min(painted), max(painted), sent, skipped))
            print(f"# {fps} frames/s, {n} browser(s): {json.dumps(lat)} painted/s {painted}",
                  file=sys.stderr, flush=True)
    print("| frames/s | browsers | painted frames | p50 ms | p99 ms | max ms | aim (p99 ≤) ms "
          "| p99 / aim | painted/s per page (min–max) | images sent | skipped (newest-only) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.1f} | {r[4]:.1f} | {r[5]:.1f} | {r[6]:.1f} | "
              f"{r[7]:.2f} | {r[8]:.1f}–{r[9]:.1f} | {r[10]} | {r[11]} |")


if __name__ == "__main__":
    main()
