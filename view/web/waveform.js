// Scrolling global-impedance waveform: the last 30 s of one value per frame (the image's sum, or
// the published eit/<stream>/global value when the stream has one), with breath marks when the
// stream publishes eit/<stream>/breath messages. Fixed memory: a ring of samples.
"use strict";
class Waveform {
  constructor(canvas, seconds = 30) {
    this.canvas = canvas;
    this.ctx = canvas.getContext("2d");
    this.seconds = seconds;
    this.cap = 65536;
    this.t = new Float64Array(this.cap);
    this.v = new Float64Array(this.cap);
    this.head = 0; this.size = 0;
    this.marks = [];  // [{t, label}]
    this.lo = -1; this.hi = 1;
  }
  clear() { this.head = 0; this.size = 0; this.marks = []; }
  push(tMs, value) {
    if (!Number.isFinite(value)) return;
    this.t[this.head] = tMs; this.v[this.head] = value;
    this.head = (this.head + 1) % this.cap; this.size = Math.min(this.size + 1, this.cap);
  }
  // kind: "end" (a line and a label: the breath's end), "valley" (a faint line: its start),
  // "peak" (a small triangle at the top: its end-inspiratory peak).
  mark(tMs, label, kind = "end") {
    this.marks.push({ t: tMs, label, kind });
    if (this.marks.length > 200) this.marks.shift();
  }
  draw(nowMs) {
    const dpr = window.devicePixelRatio || 1, c = this.canvas, ctx = this.ctx;
    const w = c.clientWidth, h = c.clientHeight;
    if (c.width !== Math.round(w * dpr) || c.height !== Math.round(h * dpr)) {
      c.width = Math.round(w * dpr); c.height = Math.round(h * dpr);
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    const left = 22, right = w - 64, top = 10, bottom = h - 22;
    const t0 = nowMs - this.seconds * 1000;
    // Range over the window, with hysteresis so the trace does not jump with every breath.
    let lo = Infinity, hi = -Infinity;
    for (let k = 0; k < this.size; k++) {
      const i = (this.head - 1 - k + this.cap) % this.cap;
      if (this.t[i] < t0) break;
      lo = Math.min(lo, this.v[i]); hi = Math.max(hi, this.v[i]);
    }
    if (lo <= hi) {
      const pad = Math.max((hi - lo) * 0.15, Math.abs(hi) * 1e-3, 1e-9);
      if (lo < this.lo || hi > this.hi || (hi - lo) < 0.4 * (this.hi - this.lo)) {
        this.lo = lo - pad; this.hi = hi + pad;
      }
    }
    const X = (t) => left + ((t - t0) / (this.seconds * 1000)) * (right - left);
    const Y = (v) => bottom - ((v - this.lo) / (this.hi - this.lo || 1)) * (bottom - top);
    // Grid: a line every 5 s, labels in seconds ago.
    ctx.strokeStyle = "#1b222b"; ctx.lineWidth = 1;
    ctx.fillStyle = "#5d6876"; ctx.font = "10px 'DejaVu Sans', sans-serif";
    ctx.textAlign = "center"; ctx.textBaseline = "top";
    for (let s = 0; s <= this.seconds; s += 5) {
      const x = X(nowMs - s * 1000);
      ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, bottom); ctx.stroke();
      ctx.fillText(s === 0 ? "now" : `−${s} s`, x, bottom + 5);
    }
    ctx.textAlign = "left"; ctx.textBaseline = "middle";
    for (const f of [0, 0.5, 1]) {
      const v = this.lo + f * (this.hi - this.lo), y = Y(v);
      ctx.beginPath(); ctx.moveTo(left, y); ctx.lineTo(right, y); ctx.stroke();
      ctx.fillText(v.toPrecision(3), right + 6, y);
    }
    let labelEnd = -Infinity;  // labels never overlap: one that would is left out
    for (const m of this.marks) {
      if (m.t < t0) continue;
      const x = X(m.t);
      if (m.kind === "peak") {
        ctx.fillStyle = "#4fb3ff";
        ctx.beginPath(); ctx.moveTo(x - 4, top); ctx.lineTo(x + 4, top); ctx.lineTo(x, top + 7); ctx.fill();
        continue;
      }
      ctx.strokeStyle = m.kind === "valley" ? "rgba(79,179,255,0.22)" : "rgba(79,179,255,0.5)";
      ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, bottom); ctx.stroke();
      if (m.label && x + 3 > labelEnd) {
        ctx.fillStyle = "#4fb3ff"; ctx.fillText(m.label, x + 3, top + 14);
        labelEnd = x + 3 + ctx.measureText(m.label).width + 4;
      }
    }
    // The trace; a gap of more than 0.5 s breaks the line (no frames then).
    ctx.strokeStyle = "#f2f5f8"; ctx.lineWidth = 1.6; ctx.lineJoin = "round";
    ctx.beginPath();
    let prev = null, lastX = -1;
    for (let k = Math.min(this.size, this.cap) - 1; k >= 0; k--) {
      const i = (this.head - 1 - k + this.cap) % this.cap;
      if (this.t[i] < t0) continue;
      const x = X(this.t[i]), y = Y(this.v[i]);
      if (prev === null || this.t[i] - prev > 500) ctx.moveTo(x, y);
      else if (x - lastX >= 0.5 || k === 0) ctx.lineTo(x, y);
      else continue;  // thousands of frames per second: one point per half pixel is enough
      prev = this.t[i]; lastX = x;
    }
    ctx.stroke();
  }
}
