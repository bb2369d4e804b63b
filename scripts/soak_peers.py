#!/usr/bin/env python3
"""The peers of scripts/soak.sh, one role per process (pyzmq; protocol in docs/protocol.md).

  soak_peers.py record ENDPOINT OUT.bin RESULT.json
      Lossless PULL consumer: appends (seq u64, crc32 of the payload u32) per image to OUT.bin,
      stops at the series-end message, closes its socket (as docs/protocol.md asks of lossless
      consumers), re-reads OUT.bin and writes RESULT.json: images, first/last seq, seq gaps, the
      series-end's frames_sent, and whether the file holds every seq once.
  soak_peers.py stall ENDPOINT
      SUB that subscribes to everything and never reads (receive high-water mark 4, 4 KiB receive
      buffer): the publisher's queue for it fills and stays full. Runs until killed.
  soak_peers.py reconnect ENDPOINT PERIOD_S RESULT.json
      SUB that closes and reopens its socket every PERIOD_S seconds and counts the images of each
      period; on SIGTERM writes RESULT.json (periods, images per period, seq gaps inside periods).
"""
import json
import signal
import struct
import sys
import time
import zlib

import zmq

HEADER = struct.Struct("<IHHBBH2IIQQqqqII32sq")  # 112 bytes, docs/protocol.md
assert HEADER.size == 112


def seq_of(header):
    return HEADER.unpack(header)[9]


def record(endpoint, out_path, result_path):
    ctx = zmq.Context()
    sock = ctx.socket(zmq.PULL)
    sock.setsockopt(zmq.RCVHWM, 1000)
    sock.connect(endpoint)
    images, gaps, first, last, frames_sent, end = 0, 0, None, None, None, False
    with open(out_path, "wb", buffering=1 << 20) as out:
        while True:
            parts = sock.recv_multipart()
            if parts[0].endswith(b"/series"):
                msg = json.loads(parts[1])
                if msg.get("type") == "series-end":
                    frames_sent, end = msg.get("frames_sent"), True
                    break
                continue
            if len(parts) != 3 or len(parts[1]) != 112:
                continue
            seq = seq_of(parts[1])
            if last is not None and seq != last + 1:
                gaps += 1
            first = seq if first is None else first
            last = seq
            images += 1
            out.write(struct.pack("<QI", seq, zlib.crc32(parts[2])))
    sock.close(linger=0)
    ctx.term()
    # Read the recording back: every seq once, in order.
    data = open(out_path, "rb").read()
    seqs = [s for s, _ in struct.iter_unpack("<QI", data)]
    complete = bool(seqs) and seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    json.dump({"images": images, "first_seq": first, "last_seq": last, "seq_gaps": gaps,
               "frames_sent": frames_sent, "series_end": end, "file_records": len(seqs),
               "file_complete": complete}, open(result_path, "w"))


def stall(endpoint):
    ctx = zmq.Context()
    sock = ctx.socket(zmq.SUB)
    sock.setsockopt(zmq.RCVHWM, 4)
    sock.setsockopt(zmq.RCVBUF, 4096)
    sock.setsockopt(zmq.SUBSCRIBE, b"")
    sock.connect(endpoint)
    signal.sigwait([signal.SIGTERM, signal.SIGINT])
    sock.close(linger=0)
    ctx.term()


def reconnect(endpoint, period_s, result_path):
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    ctx = zmq.Context()
    periods = []
    while not stop:
        sock = ctx.socket(zmq.SUB)
        sock.setsockopt(zmq.SUBSCRIBE, b"eit/")
        sock.setsockopt(zmq.RCVTIMEO, 200)
        sock.connect(endpoint)
        images, gaps, last = 0, 0, None
        t_end = time.monotonic() + period_s
        while not stop and time.monotonic() < t_end:
            try:
                parts = sock.recv_multipart()
            except zmq.Again:
                continue
            if len(parts) != 3 or len(parts[1]) != 112:
                continue
            seq = seq_of(parts[1])
            if last is not None and seq != last + 1:
                gaps += seq - last - 1
            last = seq
            images += 1
        sock.close(linger=0)
        periods.append({"images": images, "missed_inside": gaps, "full": not stop})
    ctx.term()
    json.dump({"period_s": period_s, "periods": periods}, open(result_path, "w"))


if __name__ == "__main__":
    role = sys.argv[1] if len(sys.argv) > 1 else ""
    if role == "record" and len(sys.argv) == 5:
        record(*sys.argv[2:5])
    elif role == "stall" and len(sys.argv) == 3:
        stall(sys.argv[2])
    elif role == "reconnect" and len(sys.argv) == 5:
        reconnect(sys.argv[2], float(sys.argv[3]), sys.argv[4])
    else:
        sys.exit(__doc__)
