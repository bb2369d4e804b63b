"""Shared helpers of the live-view tests: the eitstream binary, processes that print the live
view's address, a minimal raw WebSocket client, and headless Chromium (skipped visibly when
Chromium, chromedriver or selenium is missing)."""
import base64
import os
import pathlib
import re
import shutil
import socket
import struct
import subprocess
import threading
import time

import pytest

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[2]


def eitstream_bin():
    path = os.environ.get("EITSTREAM_BIN") or str(SOURCE_DIR / "build" / "eitstream")
    if not os.access(path, os.X_OK):
        pytest.skip(f"SKIPPED: eitstream binary not found at {path} (set EITSTREAM_BIN)")
    return path


def artifact_dir():
    d = pathlib.Path(os.environ.get("EIT_VIEW_ARTIFACTS") or SOURCE_DIR / "build" / "test-artifacts" / "view")
    d.mkdir(parents=True, exist_ok=True)
    return d


class Process:
    """A child process whose stderr is collected by a thread; wait_for() finds a line in it."""

    def __init__(self, args):
        self.args = args
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines = []
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stderr:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()

    def wait_for(self, pattern, timeout=30):
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for line in self.lines:
                    m = rx.search(line)
                    if m:
                        return m
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise AssertionError(f"{pattern!r} not printed by {self.args}: {self.lines}")
                self.cond.wait(min(left, 0.2))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(2)  # SIGINT: a clean stop
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def view_port(process):
    return int(process.wait_for(r"live view: http://127\.0\.0\.1:(\d+)/").group(1))


class RawWebSocket:
    """A WebSocket client on a plain socket: enough to read the view's messages, or to connect
    and then never read (a frozen browser)."""

    def __init__(self, port, receive_buffer=None):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if receive_buffer:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.sock.settimeout(10)
        self.sock.connect(("127.0.0.1", port))
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(1)  # byte by byte: leave every frame in the kernel buffer
            if not chunk:
                raise AssertionError("connection closed during the WebSocket handshake")
            self.buf += chunk
        assert self.buf.startswith(b"HTTP/1.1 101"), self.buf
        self.buf = b""

    def _need(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk

    def receive(self):
        """(opcode, payload) of the next message (the server sends unfragmented frames)."""
        self._need(2)
        op, n = self.buf[0] & 0x0F, self.buf[1] & 0x7F
        at = 2
        if n == 126:
            self._need(4)
            n, at = struct.unpack(">H", self.buf[2:4])[0], 4
        elif n == 127:
            self._need(10)
            n, at = struct.unpack(">Q", self.buf[2:10])[0], 10
        self._need(at + n)
        payload, self.buf = self.buf[at:at + n], self.buf[at + n:]
        return op, payload

    def send_text(self, text):
        data, mask = text.encode(), os.urandom(4)
        head = bytes([0x81]) + (bytes([0x80 | len(data)]) if len(data) < 126
                                else bytes([0x80 | 126]) + struct.pack(">H", len(data)))
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def close(self):
        self.sock.close()


HEADER = struct.Struct("<IHHBBH2IIQQqqqII32sq")  # docs/protocol.md, 112 bytes
assert HEADER.size == 112


def decode_header(payload):
    f = HEADER.unpack_from(payload)
    return {"magic": f[0], "ndim": f[4], "shape": (f[6], f[7]), "dropped_before": f[8],
            "seq": f[9], "series_id": f[10], "count": f[15]}


@pytest.fixture
def chromium():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("SKIPPED: python3 selenium is not installed")
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_bin = shutil.which("chromedriver")
    if not browser or not driver_bin:
        pytest.skip("SKIPPED: chromium and chromium-driver are not installed")
    drivers = []

    def launch(url, width=1280, height=760):
        options = webdriver.ChromeOptions()
        options.binary_location = browser
        for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                  f"--window-size={width},{height}", "--hide-scrollbars",
                  "--force-device-scale-factor=1", "--disable-background-timer-throttling",
                  "--disable-renderer-backgrounding"):
            options.add_argument(a)
        d = webdriver.Chrome(service=Service(driver_bin), options=options)
        drivers.append(d)
        d.get(url)
        return d

    yield launch
    for d in drivers:
        d.quit()
