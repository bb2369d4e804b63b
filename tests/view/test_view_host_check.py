"""The view's HTTP server on loopback answers only to a Host that cannot be rebound (DNS
rebinding): a page on attacker.example that resolves to 127.0.0.1 sends Origin and Host both
naming attacker.example, which the cross-origin check alone let through (the audit took a new
reference in `run --http` that way and read the images over the WebSocket)."""
import http.client
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
