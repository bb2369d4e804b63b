// The binary WebSocket message: the published image header (112 bytes, little-endian,
// docs/protocol.md "Published images") followed by the float32 payload.
"use strict";
const Wire = (() => {
  const MAGIC = 0x49544945;
  function decode(buffer) {
    if (buffer.byteLength < 112) return null;
    const v = new DataView(buffer);
    if (v.getUint32(0, true) !== MAGIC || v.getUint16(4, true) !== 1) return null;
    const headerBytes = v.getUint16(6, true);
    const count = v.getUint32(68, true);
    if (v.getUint8(8) !== 1 || headerBytes % 4 !== 0 ||
        buffer.byteLength < headerBytes + 4 * count) return null;
    const tAcq = v.getBigInt64(40, true), tPub = v.getBigInt64(48, true);
    const tPubWall = v.getBigInt64(104, true);
    return {
      ndim: v.getUint8(9),
      shape: [v.getUint32(12, true), v.getUint32(16, true)],
      droppedBefore: v.getUint32(20, true),
      seq: Number(v.getBigUint64(24, true)),
      seriesId: v.getBigUint64(32, true).toString(16).padStart(16, "0"),
      flags: v.getUint32(64, true),
      count,
      // Acquisition time on the wall clock: publish wall time minus the monotonic span.
      acquiredWallMs: Number(tPubWall - (tPub - tAcq)) / 1e6,
      values: new Float32Array(buffer, headerBytes, count),
    };
  }
  const nowWallMs = () => performance.timeOrigin + performance.now();
  return { decode, nowWallMs };
})();
