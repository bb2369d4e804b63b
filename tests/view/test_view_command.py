"""`eitstream view ENDPOINT --http 127.0.0.1:0` with a raw WebSocket client: the server waits for
a publisher, forwards its series and images in the wire format of docs/protocol.md, forwards the
series-end when the publisher stops, and picks the stream up again by itself when the publisher
restarts on the same endpoint (a new series id)."""
import json
import socket
import subprocess
import time
import urllib.request

from conftest import HEADER, Process, RawWebSocket, decode_header, eitstream_bin, view_port


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def publisher(port, stream):
    return Process([eitstream_bin(), "run", "--endpoint", f"tcp://127.0.0.1:{port}", "--fps", "50",
                    "--duration", "30", "--quiet", "--stream", stream])


def collect(ws, until, timeout=20):
    """Messages until until(kind, message) is true: ("text", dict) or ("image", header)."""
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        op, payload = ws.receive()
        if op == 1:
            item = ("text", json.loads(payload))
        elif op == 2:
            h = decode_header(payload)
            assert h["magic"] == 0x49544945
            assert len(payload) == HEADER.size + 4 * h["count"]
            item = ("image", h)
        else:
            continue
        seen.append(item)
        if until(*item):
            return seen
    raise AssertionError(f"timed out; last messages {seen[-5:]}")


def test_view_follows_a_publisher_through_a_restart():
    pub_port = free_port()
    view = Process([eitstream_bin(), "view", f"tcp://127.0.0.1:{pub_port}", "--http",
                    "127.0.0.1:0", "--duration", "50"])
    first = second = None
    try:
        port = view_port(view)
        ws = RawWebSocket(port)
        op, hello = ws.receive()
        assert op == 1 and json.loads(hello)["type"] == "hello"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=5) as r:
            state = json.load(r)
        assert state["recapture"] is False  # no pipeline in this process
        assert state["source"]["endpoints"][0]["endpoint"] == f"tcp://127.0.0.1:{pub_port}"

        first = publisher(pub_port, "bed7")
        msgs = collect(ws, lambda k, m: k == "text" and m.get("type") == "series")
        series = msgs[-1][1]
        assert series["stream"] == "bed7" and series["geometry"]["kind"] == "grid"
        sid = int(series["series_id"], 16)
        images = collect(ws, lambda k, m: k == "image" and m["series_id"] == sid)
        h = images[-1][1]
        assert h["ndim"] == 2 and h["shape"] == (32, 32) and h["count"] == 1024

        assert first.stop() == 0
        collect(ws, lambda k, m: k == "text" and m.get("type") == "series-end")

        second = publisher(pub_port, "bed7")
        msgs = collect(ws, lambda k, m: k == "text" and m.get("type") == "series")
        sid2 = int(msgs[-1][1]["series_id"], 16)
        assert sid2 != sid
        collect(ws, lambda k, m: k == "image" and m["series_id"] == sid2)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=5) as r:
            state = json.load(r)
        endpoint = state["source"]["endpoints"][0]
        assert endpoint["state"] == "connected" and endpoint["reconnects"] >= 1
        ws.close()
    finally:
        for p in (first, second):
            if p:
                p.stop()
        view.stop()


def test_run_http_with_indices_sends_the_page_global_batches_and_breaths():
    """`run --http … --indices …`: the page's socket carries the indices stage's per-frame global
    values (batched JSON, seq matching the images) and the breath messages of the breathing
    phantom (its programmed 60 breaths/min)."""
    run = Process([eitstream_bin(), "run", "--source", "phantom:breathing?rate=60&tidal=0.3",
                   "--fps", "50", "--duration", "30", "--http", "127.0.0.1:0", "--endpoint",
                   "tcp://127.0.0.1:*", "--indices", "tcp://127.0.0.1:*", "--quiet"])
    try:
        ws = RawWebSocket(view_port(run))
        globals_seen, breaths, image_seqs = 0, [], set()
        deadline = time.monotonic() + 25
        while len(breaths) < 3 and time.monotonic() < deadline:
            op, payload = ws.receive()
            if op == 2:
                image_seqs.add(decode_header(payload)["seq"])
                continue
            m = json.loads(payload)
            if m.get("type") == "global":
                assert len(m["seq"]) == len(m["value"]) == len(m["t_wall_ms"]) > 0
                globals_seen += len(m["seq"])
                if image_seqs:
                    assert min(m["seq"]) <= max(image_seqs) + 50  # the same frames' seq numbers
            elif m.get("type") == "breath":
                breaths.append(m)
        ws.close()
        assert globals_seen > 100, "no global values reached the page"
        assert len(breaths) >= 3, f"{len(breaths)} breath messages in 25 s"
        rates = [b["rate_per_min"] for b in breaths[1:]]
        assert all(abs(r - 60) < 6 for r in rates), rates
        assert breaths[-1]["pixel_data"] is True and breaths[-1]["gi"] is not None
    finally:
        run.stop()


def test_a_paced_client_gets_the_newest_images_at_its_rate():
    """A client that asks for {"type": "pace", "max_rate_hz": 50} on a 1,000 frames/s stream gets
    at most 50 images/s (plus the pacer's burst of 4), in order, and the server counts the rest
    as thinned for it, not as skipped."""
    run = Process([eitstream_bin(), "run", "--fps", "1000", "--duration", "30", "--http",
                   "127.0.0.1:0", "--endpoint", "tcp://127.0.0.1:*", "--quiet"])
    try:
        port = view_port(run)
        ws = RawWebSocket(port)
        ws.send_text(json.dumps({"type": "pace", "max_rate_hz": 50}))
        # Images sent before the server read the pace message come at the stream's rate (seen:
        # 169 images in a 3 s window under load): the window starts 0.5 s after the first image.
        seqs, first, start = [], None, None
        while start is None or time.monotonic() - start < 3.0:
            op, payload = ws.receive()
            if op != 2:
                continue
            now = time.monotonic()
            first = first or now
            if now - first < 0.5:
                continue
            start = start or now
            seqs.append(decode_header(payload)["seq"])
        elapsed = time.monotonic() - start
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/stats", timeout=5) as r:
            stats = json.load(r)
        ws.close()
        assert seqs == sorted(set(seqs)), "images out of order or repeated"
        assert 10 <= len(seqs) <= 50 * (elapsed + 0.2) + 4 + 1, (len(seqs), elapsed)
        # The stream really ran at 1,000 frames/s: consecutive images lie ~20 frames apart.
        assert (seqs[-1] - seqs[0]) / (len(seqs) - 1) > 5
        me = stats["browsers"][0]
        assert me["max_rate_hz"] == 50
        assert me["images_thinned"] > me["images_skipped"]
        assert stats["images_thinned"] >= me["images_thinned"]
    finally:
        run.stop()


def test_two_publishers_with_one_stream_name_show_as_two_streams():
    """Both publishers use run's default stream name: the old view merged their images into one
    stream (sequence numbers going backwards, two geometries interleaved). Now the second
    endpoint's stream is shown as default@ENDPOINT."""
    ports = [free_port(), free_port()]
    pubs = [Process([eitstream_bin(), "run", "--endpoint", f"tcp://127.0.0.1:{p}", "--fps", "50",
                     "--duration", "30", "--quiet"]) for p in ports]
    view = Process([eitstream_bin(), "view"] + [f"tcp://127.0.0.1:{p}" for p in ports] +
                   ["--http", "127.0.0.1:0", "--duration", "30"])
    try:
        port = view_port(view)
        deadline = time.monotonic() + 20
        streams = {}
        while time.monotonic() < deadline:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=5) as r:
                streams = {s["name"]: s for s in json.load(r)["streams"]}
            if len(streams) == 2 and all(s["images"] > 20 and s["has_series"]
                                         for s in streams.values()):
                break
            time.sleep(0.2)
        names = sorted(streams)
        assert len(names) == 2, streams
        assert "default" in names
        other = next(n for n in names if n != "default")
        assert other in (f"default@tcp://127.0.0.1:{p}" for p in ports)
        assert all(s["images"] > 20 and s["has_series"] for s in streams.values()), streams
    finally:
        view.stop()
        for p in pubs:
            p.stop()


def endpoint_state(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=5) as r:
        return json.load(r)["source"]["endpoints"][0]


def wait_endpoint(port, until, timeout=15):
    deadline = time.monotonic() + timeout
    e = endpoint_state(port)
    while not until(e) and time.monotonic() < deadline:
        time.sleep(0.1)
        e = endpoint_state(port)
    return e


def test_the_link_state_says_why_a_publisher_cannot_be_read_and_forgets_it_once_connected(
        tmp_path):
    """The old view showed "reconnecting" with "publisher disconnected" for a refused CURVE key,
    "connected" with no error for a server that is not ZeroMQ, and kept the last error after the
    publisher came back."""
    for name in ("server", "client", "other"):
        subprocess.run([eitstream_bin(), "keygen", str(tmp_path / name)], check=True,
                       capture_output=True, timeout=30)
    pub_port = free_port()
    endpoint = f"tcp://127.0.0.1:{pub_port}"
    views = {
        "none": [],
        "unknown key": ["--curve-server-key", str(tmp_path / "server"), "--curve-secret",
                        str(tmp_path / "other_secret")],
        "right key": ["--curve-server-key", str(tmp_path / "server"), "--curve-secret",
                      str(tmp_path / "client_secret")],
    }
    procs = {k: Process([eitstream_bin(), "view", endpoint, "--http", "127.0.0.1:0",
                         "--duration", "40"] + args) for k, args in views.items()}
    pub = None
    try:
        ports = {k: view_port(p) for k, p in procs.items()}
        # Nothing listens yet.
        e = wait_endpoint(ports["right key"], lambda e: e["last_error"])
        assert "no publisher accepts connections" in e["last_error"], e
        pub = Process([eitstream_bin(), "run", "--endpoint", endpoint, "--fps", "50",
                       "--duration", "30", "--quiet", "--curve-secret",
                       str(tmp_path / "server_secret"), "--curve-allow", str(tmp_path / "client")])
        e = wait_endpoint(ports["right key"], lambda e: e["images"] > 0)
        assert e["state"] == "connected" and e["last_error"] == "", e
        e = wait_endpoint(ports["unknown key"], lambda e: "CURVE key" in e["last_error"])
        assert e["state"] != "connected" and "refused this client's CURVE key" in e["last_error"], e
        e = wait_endpoint(ports["none"], lambda e: "security mismatch" in e["last_error"])
        assert e["images"] == 0 and "security mismatch" in e["last_error"], e
    finally:
        for p in procs.values():
            p.stop()
        if pub:
            pub.stop()


def api(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
        return json.load(r)


def test_a_page_opened_after_the_last_image_gets_that_image_and_its_paint_is_no_latency():
    # A paused device or a finished replay: a page opened now must show the last image, not
    # nothing; that image may be minutes old, so its paint report must not count as a display
    # latency (a report of an image sent live does).
    pub_port = free_port()
    view = Process([eitstream_bin(), "view", f"tcp://127.0.0.1:{pub_port}", "--http",
                    "127.0.0.1:0", "--duration", "50"])
    pub = None
    try:
        port = view_port(view)
        early = RawWebSocket(port)  # open before the images: it shows them as they come
        pub = Process([eitstream_bin(), "run", "--endpoint", f"tcp://127.0.0.1:{pub_port}",
                       "--fps", "50", "--frames", "150", "--quiet", "--stream", "bed9"])
        # (3 s: the series message, repeated every 2 s, reaches the view even if the first was
        # sent before it connected.)
        live = [m for k, m in collect(early, lambda k, m: k == "image" and m["seq"] == 149)
                if k == "image"]
        assert pub.proc.wait(30) == 0, pub.lines
        assert live, "the open page got no image"

        late = RawWebSocket(port)
        msgs = collect(late, lambda k, m: k == "image")
        texts = [m["type"] for k, m in msgs if k == "text"]
        assert texts[:2] == ["hello", "series"], msgs
        assert msgs[-1][1]["seq"] == 149  # the newest image, and only after its series
        more, until = [], time.monotonic() + 1.5  # then only status texts: the publisher is gone
        while time.monotonic() < until:
            more.append(late.receive()[0])
        assert more and 2 not in more, more

        now_ms = time.time() * 1e3
        late.send_text(json.dumps({"type": "painted", "seq": 149, "paint_wall_ms": now_ms}))
        early.send_text(json.dumps({"type": "painted", "seq": 148, "paint_wall_ms": now_ms}))
        deadline = time.monotonic() + 5
        while (stats := api(port, "/api/stats"))["paint_reports"] < 1:
            assert time.monotonic() < deadline, stats
            time.sleep(0.05)
        time.sleep(0.3)  # both reports are in by now (sent first on its own connection)
        stats = api(port, "/api/stats")
        assert stats["paint_reports"] == 1 and stats["display_latency_ms"]["count"] == 1, stats
        assert sorted(b["painted"] for b in stats["browsers"]) == [1, 1], stats["browsers"]
        early.close()
        late.close()
    finally:
        if pub:
            pub.stop()
        view.stop()
