"""The 112-byte image header of eitstream's published images (docs/protocol.md)."""
import numpy as np

MAGIC = 0x49544945  # bytes "EITI"
HEADER = np.dtype([("magic", "<u4"), ("version", "<u2"), ("header_bytes", "<u2"), ("dtype", "u1"),
                   ("ndim", "u1"), ("reserved", "<u2"), ("shape", "<u4", (2,)),
                   ("dropped_before", "<u4"), ("seq", "<u8"), ("series_id", "<u8"),
                   ("t_acquired_ns", "<i8"), ("t_published_ns", "<i8"), ("t_device_ns", "<i8"),
                   ("flags", "<u4"), ("count", "<u4"), ("model_id", "S32"),
                   ("t_published_wall_ns", "<i8")])
assert HEADER.itemsize == 112


def decode_header(buf):
    """One header as a numpy record; ValueError when it is not an eitstream image header."""
    if len(buf) < HEADER.itemsize:
        raise ValueError(f"image header has {len(buf)} bytes, expected {HEADER.itemsize}")
    h = np.frombuffer(buf, HEADER, count=1)[0]
    if h["magic"] != MAGIC or h["version"] != 1:
        raise ValueError(f"not an eitstream image header (magic {h['magic']:#x}, "
                         f"version {h['version']})")
    return h


def decode_image(header, payload):
    """The image of one message as float32, shaped (rows, columns) or (n,)."""
    shape = tuple(int(s) for s in header["shape"][: header["ndim"]])
    img = np.frombuffer(payload, "<f4")
    if img.size != int(header["count"]):
        raise ValueError(f"payload has {img.size} values, header says {header['count']}")
    return img.reshape(shape)


def decode_batch(headers, payloads):
    """The images of a batch message ("eit/<stream>/imgs": every header back to back, then every
    payload back to back) as a list of (header, image); ValueError when the parts disagree."""
    size = HEADER.itemsize
    if not headers or len(headers) % size:
        raise ValueError(f"batch header part has {len(headers)} bytes, expected a multiple of {size}")
    hs = [decode_header(headers[i:i + size]) for i in range(0, len(headers), size)]
    counts = [int(h["count"]) for h in hs]
    if 4 * sum(counts) != len(payloads):
        raise ValueError(f"batch payload part has {len(payloads)} bytes, its headers say "
                         f"{4 * sum(counts)}")
    out, offset = [], 0
    for h, n in zip(hs, counts):
        out.append((h, decode_image(h, payloads[offset:offset + 4 * n])))
        offset += 4 * n
    return out
