#!/usr/bin/env python3
"""Minimal eitstream subscriber: decodes published images (docs/protocol.md) and shows or saves one.

    python3 tools/python/subscriber.py tcp://127.0.0.1:5555            # live view
    python3 tools/python/subscriber.py tcp://127.0.0.1:5555 --save out.png
"""
import argparse, json, time
import numpy as np, zmq

HEADER = np.dtype([("magic", "<u4"), ("version", "<u2"), ("header_bytes", "<u2"), ("dtype", "u1"),
                   ("ndim", "u1"), ("reserved", "<u2"), ("shape", "<u4", (2,)), ("dropped_before", "<u4"),
                   ("seq", "<u8"), ("series_id", "<u8"), ("t_acquired_ns", "<i8"), ("t_published_ns", "<i8"),
                   ("t_device_ns", "<i8"), ("flags", "<u4"), ("count", "<u4"), ("model_id", "S32"),
                   ("t_published_wall_ns", "<i8")])  # 112 bytes, little-endian, packed

ap = argparse.ArgumentParser()
ap.add_argument("endpoint", nargs="?", default="tcp://127.0.0.1:5555")
ap.add_argument("--save", help="save the first image as PNG and exit")
ap.add_argument("--force", action="store_true", help="replace an existing --save file")
args = ap.parse_args()
import os
if args.save and os.path.isfile(args.save) and not args.force:  # as every eitstream writer does
    ap.error(f"--save {args.save}: the file exists; give --force to replace it")
import matplotlib; matplotlib.use("Agg" if args.save else matplotlib.get_backend())
import matplotlib.pyplot as plt
sock = zmq.Context().socket(zmq.SUB)
sock.connect(args.endpoint)
sock.setsockopt_string(zmq.SUBSCRIBE, "eit/")
series, artist = None, None
while True:
    topic, *rest = sock.recv_multipart()
    if topic.endswith(b"/series"):
        series = json.loads(rest[0]); continue
    if series is None: continue  # geometry arrives with the series message (every few seconds)
    # "imgs" (run --publish-batch N): N headers, then N payloads; show the batch's last image.
    n = len(rest[0]) // HEADER.itemsize if topic.endswith(b"/imgs") else 1
    h = np.frombuffer(rest[0], HEADER, count=n)[-1]
    assert h["magic"] == 0x49544945 and h["version"] == 1, "not an eitstream image"
    img = np.frombuffer(rest[1], "<f4")[-int(h["count"]):].reshape(h["shape"][: h["ndim"]])
    latency_us = (time.clock_gettime_ns(time.CLOCK_MONOTONIC) - h["t_acquired_ns"]) / 1e3
    print(f"seq {h['seq']} shape {img.shape} latency {latency_us:.0f} us dropped {h['dropped_before']}")
    if img.ndim == 2 and series["geometry"].get("mask"):
        img = np.ma.masked_array(img, np.array(series["geometry"]["mask"], bool).reshape(img.shape))
    if img.ndim == 1 and series["geometry"]["kind"] == "mesh":
        g = series["geometry"]; xy = np.array(g["nodes"])
        tri, on_nodes = np.array(g["elements"]), g["output_on"] == "nodes"
        draw = lambda ax: (ax.tripcolor(xy[:, 0], xy[:, 1], tri, img, shading="gouraud", cmap="RdBu_r") if on_nodes
                           else ax.tripcolor(xy[:, 0], xy[:, 1], tri, facecolors=img, cmap="RdBu_r"))
    else:
        draw = lambda ax: ax.imshow(img, origin="lower", cmap="RdBu_r")
    if args.save:
        fig, ax = plt.subplots(); draw(ax); ax.set_aspect("equal"); ax.set_title(f"seq {h['seq']}")
        fig.savefig(args.save, dpi=100); print(f"saved {args.save}"); break
    plt.cla(); draw(plt.gca()); plt.gca().set_aspect("equal"); plt.pause(0.001)
