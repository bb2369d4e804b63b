"""The live view in a real headless Chromium against `eitstream run --http 127.0.0.1:0` streaming
the synthetic phantom at 50 frames/s: the page keeps up with the stream, draws the anomaly and the
colour bar, a frozen second client (a raw WebSocket that never reads) does not slow it, and the
page reconnects by itself when the process comes back.
Screenshots go to build/test-artifacts/view/ (EIT_VIEW_ARTIFACTS)."""
import json
import time
import urllib.request

import pytest

from conftest import Process, RawWebSocket, artifact_dir, eitstream_bin, view_port

# What the page knows about the image it shows, in screenshot pixels: the strongest pixel (the
# anomaly), a quiet one inside the body, and the colour bar's ends with their expected colours.
PROBE = """
const st = window.eitView, view = window.eitImageView, img = st.latest, g = st.series.geometry;
const L = view.layout(), r = view.canvas.getBoundingClientRect(), dpr = window.devicePixelRatio;
let hi = -1, lo = Infinity, iHi = 0, iLo = 0;
const b = view.body;
for (let i = 0; i < img.values.length; i++) {
  if (g.mask[i]) continue;
  const a = Math.abs(img.values[i]);
  if (a > hi) { hi = a; iHi = i; }
  // The quiet reference pixel: well inside the body, away from the outline drawn at its edge.
  const x = (g.x0 + (i % g.nx) * g.dx - b.cx) / b.rx, y = (g.y0 + Math.floor(i / g.nx) * g.dy - b.cy) / b.ry;
  if (x * x + y * y < 0.5 && a < lo) { lo = a; iLo = i; }
}
const at = (i) => { const row = Math.floor(i / g.nx), col = i % g.nx;
  return [(r.left + L.X(g.x0 + col * g.dx)) * dpr, (r.top + L.Y(g.y0 + row * g.dy)) * dpr]; };
const barX = (r.left + L.w - L.bar + 18 + 8) * dpr, barH = Math.max(60, L.h - 90);
return {anomaly: at(iHi), quiet: at(iLo), peak: hi, quiet_value: lo, scale: st.scale,
        bar_top: [barX, (r.top + 43) * dpr], bar_bottom: [barX, (r.top + 40 + barH - 4) * dpr],
        bar_top_rgb: Colormap.css(1), bar_bottom_rgb: Colormap.css(-1), seq: img.seq};
"""


def frames_shown(driver):
    return int(driver.find_element("id", "frames").text)


def page_counter(driver):
    """The page's frame counter and the page's own clock (s), read together."""
    n, t = driver.execute_script("return [window.eitView.framesReceived, performance.now()]")
    return n, t / 1000


def stats(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/stats", timeout=5) as r:
        return json.load(r)


def rgb(text):
    return tuple(int(v) for v in text[text.index("(") + 1:-1].split(","))


def distance(a, b):
    return sum((x - y) ** 2 for x, y in zip(a[:3], b[:3])) ** 0.5


def test_page_keeps_up_draws_the_anomaly_and_ignores_a_frozen_client(chromium):
    from PIL import Image  # Pillow: installed with matplotlib (scripts/install-deps.sh)

    run = Process([eitstream_bin(), "run", "--http", "127.0.0.1:0", "--endpoint",
                   "tcp://127.0.0.1:*", "--fps", "50", "--duration", "45", "--quiet"])
    try:
        port = view_port(run)
        driver = chromium(f"http://127.0.0.1:{port}/")
        deadline = time.monotonic() + 20
        while frames_shown(driver) < 20:
            assert time.monotonic() < deadline, "the page shows no frames"
            time.sleep(0.2)
        assert driver.find_element("id", "link").text == "LIVE"

        frozen = RawWebSocket(port, receive_buffer=4096)  # connects, then never reads
        time.sleep(0.5)
        f0, t0 = page_counter(driver)
        time.sleep(4.0)
        f1, t1 = page_counter(driver)
        rate = (f1 - f0) / (t1 - t0)
        assert abs(frames_shown(driver) - page_counter(driver)[0]) <= 30  # what the page displays
        s = stats(port)
        print(f"page: {rate:.1f} frames/s while a frozen client is connected; server: {s}")
        assert rate >= 40, f"the page showed {rate:.1f} frames/s of a 50 frames/s stream"

        assert len(s["browsers"]) == 2
        page = max(s["browsers"], key=lambda b: b["painted"])
        stuck = min(s["browsers"], key=lambda b: b["painted"])
        print(f"server: page {page}, frozen client {stuck}")
        assert page["painted"] > 0 and stuck["painted"] == 0
        # The frozen client really stopped taking frames: the server skipped for it, not the page.
        assert stuck["images_skipped"] > 0
        assert stuck["images_sent"] < page["images_sent"]
        assert s["display_latency_ms"]["count"] > 0
        # The page reports its receive and display-frame times (the latency's parts) and asks to
        # be paced to twice its display's refresh (at least 120 images/s); the raw client did not.
        assert s["display_latency_parts_ms"]["received_to_frame"]["count"] > 0
        assert page["max_rate_hz"] >= 120 and stuck["max_rate_hz"] == 0

        driver.save_screenshot(str(artifact_dir() / "live-view.png"))
        driver.find_element("id", "freeze").click()
        time.sleep(0.3)
        probe = driver.execute_script(PROBE)
        shot = artifact_dir() / "live-view-frozen.png"
        driver.save_screenshot(str(shot))
        print(f"probe: {probe}")
        with Image.open(shot) as im:
            im = im.convert("RGB")
            anomaly = im.getpixel(tuple(round(v) for v in probe["anomaly"]))
            quiet = im.getpixel(tuple(round(v) for v in probe["quiet"]))
            top = im.getpixel(tuple(round(v) for v in probe["bar_top"]))
            bottom = im.getpixel(tuple(round(v) for v in probe["bar_bottom"]))
        print(f"pixels: anomaly {anomaly}, quiet {quiet}, colour bar top {top} bottom {bottom}")
        assert probe["peak"] > 5 * probe["quiet_value"]
        assert distance(anomaly, quiet) > 60, "the anomaly looks like the background"
        # The colour bar: its ends show the colour map's ends (+scale at the top, -scale below).
        assert distance(top, rgb(probe["bar_top_rgb"])) < 40
        assert distance(bottom, rgb(probe["bar_bottom_rgb"])) < 40
        assert "conductivity" in driver.find_element("id", "units").text
        frozen.close()

        # The publisher goes away: the page says so; it comes back on the same address: the page
        # reconnects by itself and shows frames again.
        assert run.stop() == 0
        wait_for_pill(driver, "RECONNECTING")
        restarted = Process([eitstream_bin(), "run", "--http", f"127.0.0.1:{port}", "--endpoint",
                             "tcp://127.0.0.1:*", "--fps", "50", "--duration", "20", "--quiet"])
        try:
            assert view_port(restarted) == port
            driver.find_element("id", "freeze").click()  # resume
            wait_for_pill(driver, "LIVE")
            before = frames_shown(driver)
            time.sleep(1.0)
            assert frames_shown(driver) > before
        finally:
            restarted.stop()
    finally:
        run.stop()


def wait_for_pill(driver, text, timeout=10):
    deadline = time.monotonic() + timeout
    while driver.find_element("id", "link").text != text:
        assert time.monotonic() < deadline, (
            f"the page's state is {driver.find_element('id', 'link').text!r}, expected {text!r}")
        time.sleep(0.1)


def test_page_shows_breath_marks_and_numbers_of_the_indices(chromium):
    """`run --http --indices` on the breathing phantom: the page draws the published global
    impedance, marks breaths on the waveform and shows the last breath's numbers."""
    run = Process([eitstream_bin(), "run", "--source", "phantom:breathing?rate=60&tidal=0.3",
                   "--fps", "50", "--duration", "40", "--http", "127.0.0.1:0", "--endpoint",
                   "tcp://127.0.0.1:*", "--indices", "tcp://127.0.0.1:*", "--quiet"])
    try:
        driver = chromium(f"http://127.0.0.1:{view_port(run)}/")
        deadline = time.monotonic() + 30
        while driver.execute_script("return window.eitView.breaths") < 3:
            assert time.monotonic() < deadline, "no breath messages reached the page"
            time.sleep(0.2)
        st = driver.execute_script(
            "const s = window.eitView; return {points: s.globalPoints, published: s.publishedGlobal,"
            " rate: s.lastBreath.rate_per_min}")
        assert st["published"] and st["points"] > 100
        assert abs(st["rate"] - 60) < 6
        numbers = driver.find_element("id", "breath-numbers").text
        assert "Rate" in numbers and "TIV" in numbers and "GI" in numbers, numbers
        assert "published global impedance" in driver.find_element("id", "wave-info").text
        driver.save_screenshot(str(artifact_dir() / "live-view-indices.png"))
    finally:
        run.stop()
