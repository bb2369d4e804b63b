"""A subscriber to `eitstream run`'s published images (docs/protocol.md).

Conflating (the default): each next() returns the newest image waiting and skips older ones, so a
slow consumer (a live plot) shows the present instead of falling further behind. ZeroMQ's own
CONFLATE option cannot be used (it breaks multipart messages); instead every waiting message is
drained without decoding and only the last image is decoded.

Batch messages ("imgs", from `run --publish-batch N`) are read too: conflating takes the last
image of the newest one; otherwise next() returns their images one by one, in order."""
import json
import os
import time
from dataclasses import dataclass, field

import numpy as np
import zmq

from .curve import apply_client
from .header import HEADER, decode_batch, decode_header, decode_image

# The largest message accepted (ZMQ_MAXMSGSIZE): an image of 1024×1024 floats.
MAX_MESSAGE_BYTES = 4 << 20


@dataclass
class Image:
    header: np.void
    image: np.ndarray
    series: dict = field(default_factory=dict)   # the latest series message (geometry, …)
    skipped: int = 0                              # images passed over to return this one

    @property
    def seq(self):
        return int(self.header["seq"])

    def latency_us(self):
        """Acquisition → now on this host's CLOCK_MONOTONIC (same host only)."""
        return (time.clock_gettime_ns(time.CLOCK_MONOTONIC) - int(self.header["t_acquired_ns"])) / 1e3


def _images_in(parts):
    """How many images a message holds (a batch's header part has one header per image)."""
    if parts[0].endswith(b"/imgs") and len(parts) == 3:
        return max(len(parts[1]) // HEADER.itemsize, 1)
    return 1


class Subscriber:
    def __init__(self, endpoint="tcp://127.0.0.1:5555", stream=None, conflate=True,
                 context=None, rcvhwm=10000, curve_server_key=None, curve_secret=None,
                 io_cpu=None):
        """curve_server_key / curve_secret: certificate files (eitstream keygen) to connect to a
        CURVE publisher (docs/security.md): the server's public one and this client's secret one.
        io_cpu: run this subscriber's ZeroMQ I/O thread on that CPU, in a context of its own. On
        the CPU of the publisher's sink thread (`eitstream run --latency-mode spin --cpus`, which
        prints it), an ipc or tcp image reaches this process without waking another CPU
        (docs/protocol.md, "Lowest latency on the same host")."""
        if (curve_server_key is None) != (curve_secret is None):
            raise ValueError("curve_server_key and curve_secret go together")
        # libzmq asserts (and aborts the interpreter) when its I/O thread cannot take the CPU.
        if io_cpu is not None and int(io_cpu) not in os.sched_getaffinity(0):
            raise ValueError(f"io_cpu={io_cpu}: this process may use CPUs "
                             f"{sorted(os.sched_getaffinity(0))}")
        self._own_context = io_cpu is not None
        if self._own_context:
            if context is not None:
                raise ValueError("io_cpu places the I/O thread of a context of the subscriber's "
                                 "own: give io_cpu or context, not both")
            context = zmq.Context()
            context.set(zmq.THREAD_AFFINITY_CPU_ADD, int(io_cpu))  # before the first socket
        self.context = context or zmq.Context.instance()
        self.socket = self.context.socket(zmq.SUB)
        self.socket.setsockopt(zmq.RCVHWM, rcvhwm)
        self.socket.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
        if curve_server_key is not None:
            apply_client(self.socket, curve_server_key, curve_secret)
        self.socket.connect(endpoint)
        prefix = f"eit/{stream}/" if stream else "eit/"
        self.socket.setsockopt_string(zmq.SUBSCRIBE, prefix)
        self.conflate = conflate
        self.pending = []    # not conflating: the rest of the last batch message, in order
        self.series = {}
        self.skipped = 0     # images skipped in total by conflation
        self.received = 0    # images returned
        self.malformed = 0   # image messages dropped because they did not decode

    def _handle_series(self, parts):
        msg = json.loads(parts[1])
        if msg.get("type") == "series":
            self.series = msg
        return msg

    def next(self, timeout_ms=1000):
        """The next (conflating: the newest) image, or None when none came within timeout_ms
        (None or a negative value: wait until one comes). Series messages on the way update
        .series; an image message that does not decode is dropped and counted in .malformed
        (docs/protocol.md), the wait going on."""
        if self.pending:
            h, img = self.pending.pop(0)
            self.received += 1
            return Image(h, img, self.series, 0)
        forever = timeout_ms is None or timeout_ms < 0
        deadline = None if forever else time.monotonic() + timeout_ms / 1000.0
        while True:
            left = None if forever else max(0, int((deadline - time.monotonic()) * 1000))
            if not self.socket.poll(left):
                return None
            image = self._take()
            if image is not None:
                return image
            if not forever and time.monotonic() >= deadline:
                return None

    def _take(self):
        """Reads what is queued: the next (conflating: the newest) image, or None."""
        newest = None
        skipped = -1
        while True:
            try:
                parts = self.socket.recv_multipart(zmq.NOBLOCK, copy=True)
            except zmq.Again:
                break
            if parts[0].endswith(b"/series"):
                self._handle_series(parts)
            else:
                newest = parts
                skipped += _images_in(parts)
            if not self.conflate and newest is not None:
                break
        if newest is None:
            return None
        try:
            if newest[0].endswith(b"/imgs"):
                images = decode_batch(newest[1], newest[2])
                if self.conflate:
                    images = images[-1:]
                (h, img), self.pending = images[0], images[1:]
            else:
                h = decode_header(newest[1])
                img = decode_image(h, newest[2])
        except (ValueError, IndexError):
            self.malformed += 1
            return None
        if not self.conflate:
            skipped = 0
        self.skipped += max(skipped, 0)
        self.received += 1
        return Image(h, img, self.series, max(skipped, 0))

    def __iter__(self):
        while True:
            im = self.next()
            if im is not None:
                yield im

    def close(self):
        self.socket.close(linger=0)
        if self._own_context:
            self.context.term()
