"""The view's HTTP server on loopback answers only to a Host that cannot be rebound (DNS
rebinding): a page on attacker.example that resolves to 127.0.0.1 sends Origin and Host both
naming attacker.example, which the cross-origin check alone let through (the audit took a new
reference in `run --http` that way and read the images over the WebSocket)."""
import http.client
import subprocess
import json

from conftest import Process, eitstream_bin, view_port


def request(port, method, path, host, origin=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    h = {"Host": host}
    if origin:
        h["Origin"] = origin
    h.update(headers or {})
    conn.request(method, path, headers=h)
    r = conn.getresponse()
    body = r.read().decode(errors="replace")
    conn.close()
    return r.status, body


def test_a_loopback_view_refuses_a_rebound_host_name():
    view = Process([eitstream_bin(), "view", "tcp://127.0.0.1:1", "--http", "127.0.0.1:0",
                    "--duration", "30"])
    try:
        port = view_port(view)
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost", f"[::1]:{port}"):
            status, body = request(port, "GET", "/api/state", host)
            assert status == 200, (host, body)
            assert "streams" in json.loads(body)
        evil = f"attacker.example:{port}"
        origin = f"http://{evil}"
        status, body = request(port, "GET", "/api/state", evil, origin)
        assert status == 403 and "attacker.example" in body, body
        status, _ = request(port, "POST", "/api/stats/reset", evil, origin)
        assert status == 403
        status, _ = request(port, "POST", "/api/recapture?frames=5", evil, origin)
        assert status == 403
        upgrade = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
                   "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
        status, _ = request(port, "GET", "/ws", evil, origin, upgrade)
        assert status == 403
        # The same upgrade from a loopback name is accepted.
        status, _ = request(port, "GET", "/ws", f"127.0.0.1:{port}", f"http://127.0.0.1:{port}",
                            upgrade)
        assert status == 101
    finally:
        view.stop()


def test_view_answers_wrong_requests_with_what_is_wrong_and_takes_localhost():
    """The old server took --http localhost:PORT as an invalid address, and answered a plain GET
    of /ws or of a POST-only API with 404 "no such page"."""
    view = Process([eitstream_bin(), "view", "tcp://127.0.0.1:1", "--http", "localhost:0",
                    "--duration", "30"])
    try:
        port = view_port(view)
        here = f"127.0.0.1:{port}"
        status, body = request(port, "GET", "/ws", here)
        assert status == 426 and "WebSocket" in body, body
        for path in ("/api/recapture", "/api/stats/reset"):
            status, body = request(port, "GET", path, here)
            assert status == 405 and "takes POST" in body, body
    finally:
        view.stop()
    bad = subprocess.run([eitstream_bin(), "view", "tcp://127.0.0.1:1", "--duration", "-1"],
                         capture_output=True, text=True, timeout=30)
    assert bad.returncode == 2 and "expected seconds >= 0" in bad.stderr, bad.stderr
