"""`eitstream view nats://HOST:PORT?site=S&bed=B` against a real `nats-server -js` on a loopback
port, with `eitstream run --publish nats://…` publishing: the view follows the bed live (the bed's
stored history is not replayed unless since= asks for it), forwards the series message with its
geometry and the images in the wire format, a server that is down at start or killed mid-stream
is a status (page and stderr) the view recovers from by itself, and the URI's TLS options reach
libnats. Skips visibly when nats-server (or openssl, for TLS) is not installed or eitstream was
built without NATS."""
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request

import pytest

from conftest import HEADER, Process, RawWebSocket, decode_header, eitstream_bin, view_port


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class NatsServer:
    """A real `nats-server -js` on a free loopback port with its own store folder, killed (SIGKILL)
    and restarted on the same port and store on demand (as tests/nats/nats_server.hpp does)."""

    def __init__(self, start=True, tls=None):
        self.binary = shutil.which("nats-server") or next(
            (p for p in ("/usr/sbin/nats-server", "/usr/bin/nats-server") if os.access(p, os.X_OK)),
            None)
        if not self.binary:
            pytest.skip("SKIPPED: nats-server is not installed")
        self.port = free_port()
        self.store = tempfile.mkdtemp(prefix="eit-view-nats-")
        self.proc = None
        self.tls = ["--tls", "--tlscert", tls[0], "--tlskey", tls[1]] if tls else []
        if start:
            self.start()

    @property
    def url(self):
        return f"nats://127.0.0.1:{self.port}"

    def start(self):
        self.proc = subprocess.Popen([self.binary, "-js", "-a", "127.0.0.1", "-p", str(self.port),
                                      "-sd", self.store, "-l", os.path.join(self.store, "log"),
                                      *self.tls])
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # ready when it greets with its INFO line
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    if s.recv(4) == b"INFO":
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"nats-server on port {self.port} did not start")

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def close(self):
        self.kill()
        shutil.rmtree(self.store, ignore_errors=True)


@pytest.fixture
def nats_server():
    server = NatsServer()
    yield server
    server.close()


def published_wall_ns(payload):
    return struct.unpack_from("<q", payload, 104)[0]  # t_published_wall_ns (docs/protocol.md)


def view_on(uri, duration=60, also=()):
    view = Process([eitstream_bin(), "view", uri, *also, "--http", "127.0.0.1:0", "--duration",
                    str(duration)])
    try:
        return view, view_port(view)
    except AssertionError:
        if any("built without NATS" in line for line in view.lines):
            pytest.skip("SKIPPED: this eitstream was built without NATS (libnats-dev)")
        raise


def publisher(uri, *args):
    return Process([eitstream_bin(), "run", "--publish", uri, "--endpoint", "tcp://127.0.0.1:*",
                    "--quiet", *args])


def source_state(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=5) as r:
        return json.load(r)["source"]


def wait_state(port, predicate, what, timeout=20):
    deadline = time.monotonic() + timeout
    while True:
        source = source_state(port)
        if predicate(source["endpoints"][0]):
            return source
        assert time.monotonic() < deadline, f"{what}: {source}"
        time.sleep(0.2)


def receive(ws, count, timeout=20, until=None):
    """Text messages (dicts) and images ((header, payload)) until `count` images arrived or
    until(kind, item) is true."""
    texts, images = [], []
    deadline = time.monotonic() + timeout
    while len(images) < count:
        assert time.monotonic() < deadline, f"{len(images)} of {count} images; texts {texts[-3:]}"
        op, payload = ws.receive()
        if op == 1:
            texts.append(json.loads(payload))
            if until and until("text", texts[-1]):
                break
        elif op == 2:
            h = decode_header(payload)
            assert h["magic"] == 0x49544945
            assert len(payload) == HEADER.size + 4 * h["count"]
            images.append((h, payload))
            if until and until("image", images[-1]):
                break
    return texts, images


def test_view_follows_a_bed_live_and_replays_history_only_with_since(nats_server):
    bed = f"{nats_server.url}?site=icu&bed=5"
    old = publisher(bed, "--frames", "60", "--fps", "200")
    assert old.proc.wait(60) == 0, old.lines

    # since=all: the stored series, in order, from its first image.
    replay, replay_port = view_on(bed + "&since=all")
    live = None
    try:
        ws = RawWebSocket(replay_port)
        # (Replayed as fast as JetStream delivers: the page gets the newest of them, in order.)
        texts, images = receive(ws, 60, until=lambda k, item: k == "image" and item[0]["seq"] == 59)
        series = [m for m in texts if m.get("type") == "series"]
        assert series and series[0]["stream"] == "icu.5", texts
        old_sid = int(series[0]["series_id"], 16)
        seqs = [h["seq"] for h, _ in images]
        assert seqs == sorted(set(seqs)) and seqs[-1] == 59, seqs
        assert all(h["series_id"] == old_sid for h, _ in images)
        ws.close()
        # The feed counts an image once the page's queue took it: the page may have it first.
        deadline = time.monotonic() + 5
        while (source := source_state(replay_port))["endpoints"][0]["images"] < 60:
            assert time.monotonic() < deadline, source
            time.sleep(0.05)
        assert source["kind"] == "nats" and source["endpoints"][0]["images"] == 60, source
    finally:
        replay.stop()

    try:
        # Live (no since=): nothing of the stored series, then the new publisher's series first.
        # (A ZeroMQ endpoint beside it, where nobody publishes: one status for both feeds.)
        zmq_endpoint = f"tcp://127.0.0.1:{free_port()}"
        live, port = view_on(bed, also=[zmq_endpoint])
        wait_state(port, lambda e: e["state"] == "connected", "the view never subscribed")
        start_wall_ns = time.time_ns()
        ws = RawWebSocket(port)
        op, hello = ws.receive()
        assert op == 1 and json.loads(hello)["type"] == "hello"
        new = publisher(bed, "--fps", "50", "--duration", "30")
        try:
            texts, images = receive(ws, 30)
        finally:
            new.stop()
        series = [m for m in texts if m.get("type") == "series"]
        assert series, texts
        assert series[0]["stream"] == "icu.5" and series[0]["geometry"]["kind"] == "grid"
        assert series[0]["image"]["shape"] == [32, 32]
        sid = int(series[0]["series_id"], 16)
        assert sid != old_sid
        assert all(h["series_id"] == sid for h, _ in images), "an image of the stored series came"
        assert all(published_wall_ns(p) >= start_wall_ns for _, p in images)
        seqs = [h["seq"] for h, _ in images]
        assert seqs == sorted(set(seqs)), seqs
        assert images[-1][0]["shape"] == (32, 32) and images[-1][0]["count"] == 1024
        source = source_state(port)
        assert source["kind"] == "feeds", source
        assert [e["endpoint"] for e in source["endpoints"]] == [bed, zmq_endpoint]
        assert source["endpoints"][0]["images"] >= 30 and source["endpoints"][1]["images"] == 0
        ws.close()
    finally:
        if live:
            live.stop()


def test_view_says_the_server_is_down_and_recovers_when_it_comes_back_or_restarts():
    server = NatsServer(start=False)
    bed = f"{server.url}?site=icu&bed=7"
    view = pub = None
    try:
        # No server yet: the view serves the page and says why nothing comes.
        view, port = view_on(bed, duration=90)
        source = wait_state(port, lambda e: e["last_error"], "no error shown while the server is down")
        assert source["endpoints"][0]["state"] == "connecting"
        view.wait_for(r"icu\.7\): connecting — ")

        server.start()
        pub = publisher(bed, "--fps", "50", "--duration", "60")
        wait_state(port, lambda e: e["state"] == "connected", "not connected once the server is up")
        ws = RawWebSocket(port)
        _, before = receive(ws, 10, timeout=30)

        server.kill()
        wait_state(port, lambda e: e["state"] == "reconnecting", "the lost server not shown", 10)
        view.wait_for(r"icu\.7\): reconnecting")
        time.sleep(1.0)
        server.start()  # the same port and store: the stream and the publisher come back
        restarted_ns = time.time_ns()
        _, after = receive(ws, 100000, timeout=40,
                           until=lambda k, item: k == "image" and published_wall_ns(item[1]) > restarted_ns)
        assert view.proc.poll() is None, "the view exited"
        assert after[-1][0]["seq"] > before[-1][0]["seq"]
        assert after[-1][0]["series_id"] == before[-1][0]["series_id"]  # the same publisher's
        source = wait_state(port, lambda e: e["state"] == "connected", "not connected again")
        assert source["endpoints"][0]["reconnects"] >= 1
        # The outage is over: its error is not shown beside "connected" any more.
        assert source["endpoints"][0]["last_error"] == "", source
        ws.close()
    finally:
        for p in (pub, view):
            if p:
                p.stop()
        server.close()


def test_page_shows_a_bed_followed_through_nats(nats_server, chromium):
    bed = f"{nats_server.url}?site=ward3&bed=12"
    view, port = view_on(bed)
    pub = publisher(bed, "--fps", "50", "--duration", "40")
    try:
        driver = chromium(f"http://127.0.0.1:{port}/")
        deadline = time.monotonic() + 20
        while int(driver.find_element("id", "frames").text) < 20:
            assert time.monotonic() < deadline, "the page shows no frames from NATS"
            time.sleep(0.2)
        assert driver.find_element("id", "link").text == "LIVE"
        # The source state comes with the status message (every 500 ms), so the one on the page
        # may predate the connection that brought these frames: wait for the next ones.
        deadline = time.monotonic() + 5
        state = driver.find_element("id", "source-state").text
        while "CONNECTED" not in state and time.monotonic() < deadline:
            time.sleep(0.1)
            state = driver.find_element("id", "source-state").text
        assert bed in state and "CONNECTED" in state, state
        assert "ward3.12" in driver.find_element("id", "stream-name").text
    finally:
        pub.stop()
        view.stop()


def test_view_passes_the_uris_tls_options_to_nats(tmp_path):
    openssl = shutil.which("openssl")
    if not openssl:
        pytest.skip("SKIPPED: openssl is not installed (needed for a test certificate)")
    cert, key = str(tmp_path / "cert.pem"), str(tmp_path / "key.pem")
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext",
                    "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    server = NatsServer(tls=(cert, key))
    bed = f"{server.url}?site=icu&bed=8"
    views, pub = [], None
    try:
        with_ca, port = view_on(f"{bed}&tls-ca={cert}")
        views.append(with_ca)
        without_ca, plain_port = view_on(bed)  # the server's certificate is not trusted
        views.append(without_ca)
        pub = publisher(f"{bed}&tls-ca={cert}", "--fps", "50", "--duration", "30")
        ws = RawWebSocket(port)
        texts, images = receive(ws, 10)
        assert any(m.get("type") == "series" and m["stream"] == "icu.8" for m in texts), texts
        ws.close()
        source = wait_state(plain_port, lambda e: "SSL" in e["last_error"],
                            "no TLS error shown without the CA")
        assert source["endpoints"][0]["state"] == "connecting"
        assert source["endpoints"][0]["images"] == 0
        assert without_ca.proc.poll() is None
    finally:
        for p in (pub, *views):
            if p:
                p.stop()
        server.close()
