"""The Python client against `eitstream run` with CURVE (docs/security.md), on loopback: with an
allowed key it receives images; with an unknown key or in plaintext it receives nothing."""
import re
import subprocess

import pytest
import zmq

import eitstream


def _keygen(eitstream_bin, path):
    subprocess.run([eitstream_bin, "keygen", str(path)], check=True, capture_output=True)


def test_curve_client_receives_only_with_an_allowed_key(eitstream_bin, tmp_path):
    if not zmq.has("curve"):
        pytest.skip("this libzmq has no CURVE")
    for who in ("server", "alice", "mallory"):
        _keygen(eitstream_bin, tmp_path / who)
    p = subprocess.Popen([eitstream_bin, "run", "--fps", "200", "--duration", "6",
                          "--endpoint", "tcp://127.0.0.1:*", "--quiet",
                          "--curve-secret", str(tmp_path / "server_secret"),
                          "--curve-allow", str(tmp_path / "alice")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        match = None
        for _ in range(20):
            match = re.search(r"on (tcp://127\.0\.0\.1:\d+)", p.stderr.readline())
            if match:
                break
        endpoint = match.group(1)
        alice = eitstream.Subscriber(endpoint, curve_server_key=tmp_path / "server",
                                     curve_secret=tmp_path / "alice_secret", conflate=False)
        mallory = eitstream.Subscriber(endpoint, curve_server_key=tmp_path / "server",
                                       curve_secret=tmp_path / "mallory_secret")
        plain = eitstream.Subscriber(endpoint)
        got = [alice.next(timeout_ms=500) for _ in range(20)]
        assert sum(im is not None for im in got) >= 10
        assert mallory.next(timeout_ms=1000) is None
        assert plain.next(timeout_ms=500) is None
        for s in (alice, mallory, plain):
            s.close()
        with pytest.raises(ValueError, match="go together"):
            eitstream.Subscriber(endpoint, curve_server_key=tmp_path / "server")
    finally:
        p.wait(timeout=30)
