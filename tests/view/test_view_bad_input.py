"""Bad input in a real headless Chromium: `eitstream view` fed through a relay (pyzmq) that can hold
back the series message or stop the stream. The page waits and says so while images come without
their series message, shows the stream once the series arrives late, says "no frames since …"
when the stream stops, and goes live again when it resumes. A replay with a set-up warning
shows it in the source panel. (A publisher restart is covered by test_live_view.py and
test_view_command.py.)"""
import json
import socket
import threading
import time
import urllib.request

import pytest

from conftest import Process, eitstream_bin, view_port


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Relay:
    """SUB from the publisher, PUB to the view; `mode` picks what passes: "images" (no series),
    "all", or "none" (the stream stops)."""

    def __init__(self, zmq, source_port, relay_port):
        self.ctx = zmq.Context()
        self.sub = self.ctx.socket(zmq.SUB)
        self.sub.setsockopt(zmq.SUBSCRIBE, b"eit/")
        self.sub.connect(f"tcp://127.0.0.1:{source_port}")
        self.pub = self.ctx.socket(zmq.PUB)
        self.pub.bind(f"tcp://127.0.0.1:{relay_port}")
        self.mode = "images"
        self.forwarded = {"img": 0, "series": 0}
        self.running = True
        self.zmq = zmq
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while self.running:
            if not self.sub.poll(50):
                continue
            parts = self.sub.recv_multipart()
            kind = parts[0].rsplit(b"/", 1)[-1].decode()
            if self.mode == "none" or (self.mode == "images" and kind != "img"):
                continue
            self.pub.send_multipart(parts)
            if kind in self.forwarded:
                self.forwarded[kind] += 1

    def close(self):
        self.running = False
        self.thread.join(2)
        self.sub.close(0)
        self.pub.close(0)
        self.ctx.term()


def wait_for(driver, element, predicate, what, timeout=15):
    deadline = time.monotonic() + timeout
    while True:
        text = driver.find_element("id", element).text
        if predicate(text):
            return text
        assert time.monotonic() < deadline, f"{what}: #{element} shows {text!r}"
        time.sleep(0.1)


def test_page_waits_for_a_late_series_and_says_when_frames_stop(chromium):
    zmq = pytest.importorskip("zmq", reason="SKIPPED: python3 pyzmq is not installed")
    source_port, relay_port = free_port(), free_port()
    run = Process([eitstream_bin(), "run", "--endpoint", f"tcp://127.0.0.1:{source_port}",
                   "--fps", "50", "--duration", "60", "--quiet"])
    relay = Relay(zmq, source_port, relay_port)
    view = Process([eitstream_bin(), "view", f"tcp://127.0.0.1:{relay_port}", "--http",
                    "127.0.0.1:0", "--duration", "60"])
    try:
        driver = chromium(f"http://127.0.0.1:{view_port(view)}/")
        # Images without their series message: the page waits and says why.
        wait_for(driver, "link", lambda t: t == "WAITING", "no series message")
        overlay = wait_for(driver, "overlay", lambda t: "frames received meanwhile" in t,
                           "the waiting notice")
        assert "Waiting for the series message" in overlay
        assert relay.forwarded["img"] > 0 and relay.forwarded["series"] == 0
        assert driver.execute_script("return window.eitView.framesDrawn") == 0

        # The series arrives late: the page draws.
        relay.mode = "all"
        wait_for(driver, "link", lambda t: t == "LIVE", "series arrived")
        deadline = time.monotonic() + 10
        while driver.execute_script("return window.eitView.framesDrawn") == 0:
            assert time.monotonic() < deadline, "nothing drawn after the series arrived"
            time.sleep(0.1)

        # The stream stops (the publisher's link stays up): "no frames since …".
        relay.mode = "none"
        wait_for(driver, "link", lambda t: t == "NO FRAMES", "stream stopped")
        notice = wait_for(driver, "notice", lambda t: t.startswith("no frames since"),
                          "the stopped-stream notice")
        print(f"page says: {notice!r}")

        # It resumes: live again.
        relay.mode = "all"
        wait_for(driver, "link", lambda t: t == "LIVE", "stream resumed")
    finally:
        relay.close()
        view.stop()
        run.stop()


def test_page_lists_a_replays_set_up_warning_in_its_source_panel(chromium, tmp_path):
    """A replayed CSV with a header row: run says so once on stderr, and the page's source panel
    keeps saying it for as long as the run lasts (it is no 'last problem' of the source)."""
    csv = tmp_path / "headed.csv"
    rows = [",".join(f"{1.0 + 0.001 * (row + i):.4f}" for i in range(208)) for row in range(50)]
    csv.write_text("electrode pairs\n" + "\n".join(rows) + "\n")
    warning = "headed.csv: first row is a header, skipped"
    run = Process([eitstream_bin(), "run", "--source", str(csv), "--loop", "--fps", "50",
                   "--duration", "60", "--backend", "cpu", "--endpoint", "tcp://127.0.0.1:*",
                   "--http", "127.0.0.1:0", "--quiet"])
    try:
        port = view_port(run)
        assert run.wait_for(r"eitstream: warning: (.*)").group(1) == warning
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=5) as r:
            source = json.load(r)["source"]
        assert source["kind"] == "pipeline" and source["warnings"] == [warning]
        assert source["source"]["last_error"] == ""
        driver = chromium(f"http://127.0.0.1:{port}/")
        wait_for(driver, "source-state", lambda t: f"warning: {warning}" in t,
                 "the replay's warning in the source panel")
        assert driver.find_element("id", "last-error").text == "none"
    finally:
        run.stop()
