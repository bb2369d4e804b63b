// Draws one image on a 2-D canvas: a pixel grid (with its mask, at its true aspect ratio from
// dx, dy), a voxel grid as a row of its z-planes, or values on a triangle mesh (a tetrahedral
// mesh gets a notice instead), the body outline, the electrodes with their numbers, the
// orientation labels (EIT convention: viewed from the feet, anterior up, the patient's right on
// the left of the screen; model +y is anterior, +x the patient's left) and the colour bar.
"use strict";
class ImageView {
  constructor(canvas) {
    this.canvas = canvas;
    this.ctx = canvas.getContext("2d");
    this.series = null;
    this.off = document.createElement("canvas");
    this.offCtx = this.off.getContext("2d");
    // Everything but the image (outline, electrodes, labels, colour bar) is drawn once into this
    // layer and redrawn only when the size, the scale or the series changes.
    this.layer = document.createElement("canvas");
    this.layerKey = "";
  }

  setSeries(series) {
    this.series = series;
    this.layerKey = "";
    this.notice = "";
    const g = series.geometry;
    // A voxel grid (nz > 1) is drawn as a row of its z-planes, lowest on the left, each plane a
    // panel of the grid's width; panels are `pitch` apart in world units.
    this.planes = g.kind === "grid" ? (g.nz || 1) : 1;
    if (g.kind === "mesh" && (g.dim === 3 || (g.elements.length && g.elements[0].length === 4))) {
      this.notice = "3-D model: one value per tetrahedron, which this view cannot draw.\n" +
        "Build it with `eitstream model build --dim 3 … --voxels 32x32x4`\n" +
        "to see its z-planes here.";
      this.world = { x0: -1, x1: 1, y0: -1, y1: 1 };
      this.electrodes = []; this.boundary = [];
      return;
    }
    if (g.kind === "grid") {
      this.off.width = g.nx; this.off.height = g.ny * this.planes;
      this.pixels = this.offCtx.createImageData(g.nx, g.ny * this.planes);
      // World extent: pixel centres at x0 + c·dx, so the edges are half a pixel further out.
      let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
      for (let i = 0; i < g.nx * g.ny * this.planes; i++) {
        if (g.mask[i]) continue;
        const c = i % g.nx, r = Math.floor(i / g.nx) % g.ny;
        const x = g.x0 + c * g.dx, y = g.y0 + r * g.dy;
        x0 = Math.min(x0, x - g.dx / 2); x1 = Math.max(x1, x + g.dx / 2);
        y0 = Math.min(y0, y - g.dy / 2); y1 = Math.max(y1, y + g.dy / 2);
      }
      const width = g.nx * g.dx;
      this.pitch = width * 1.15;
      this.world = { x0: g.x0 - g.dx / 2, x1: g.x0 - g.dx / 2 + (this.planes - 1) * this.pitch + width,
                     y0: g.y0 - g.dy / 2, y1: g.y0 + (g.ny - 0.5) * g.dy };
      this.body = { cx: (x0 + x1) / 2, cy: (y0 + y1) / 2, rx: (x1 - x0) / 2, ry: (y1 - y0) / 2 };
      // Electrode k where pyEIT puts it, (−cos θk, sin θk) on the body's bounding ellipse; a voxel
      // grid's electrodes sit on rings between its planes, so none are drawn there.
      const n = this.planes > 1 ? 0 : (series.electrodes || 0);
      this.electrodes = [];
      for (let k = 0; k < n; k++) {
        const t = (2 * Math.PI * k) / n;
        this.electrodes.push([this.body.cx - this.body.rx * Math.cos(t),
                              this.body.cy + this.body.ry * Math.sin(t)]);
      }
    } else {
      const nodes = g.nodes;
      let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
      for (const [x, y] of nodes) {
        x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y);
      }
      this.world = { x0, x1, y0, y1 };
      this.body = { cx: (x0 + x1) / 2, cy: (y0 + y1) / 2, rx: (x1 - x0) / 2, ry: (y1 - y0) / 2 };
      this.electrodes = (g.electrode_nodes || []).map((i) => nodes[i]);
      // Boundary edges (used by one triangle only) for the outline.
      const count = new Map();
      for (const [a, b, c] of g.elements)
        for (const [p, q] of [[a, b], [b, c], [c, a]]) {
          const key = p < q ? p * 1e7 + q : q * 1e7 + p;
          count.set(key, (count.get(key) || 0) + 1);
        }
      this.boundary = [];
      for (const [key, n] of count) if (n === 1) this.boundary.push([Math.floor(key / 1e7), key % 1e7]);
      this.binOf = new Uint16Array(g.elements.length);
    }
  }

  // Canvas layout: the image fitted (true aspect) left of the colour bar, with margins for labels.
  layout() {
    const dpr = window.devicePixelRatio || 1;
    const w = this.canvas.clientWidth, h = this.canvas.clientHeight;
    if (this.canvas.width !== Math.round(w * dpr) || this.canvas.height !== Math.round(h * dpr)) {
      this.canvas.width = Math.round(w * dpr); this.canvas.height = Math.round(h * dpr);
    }
    this.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const bar = 92, margin = 58;
    const ww = this.world.x1 - this.world.x0, wh = this.world.y1 - this.world.y0;
    const s = Math.max(1, Math.min((w - bar - 2 * margin) / ww, (h - 2 * margin) / wh));
    const ox = margin + (w - bar - 2 * margin - s * ww) / 2, oy = margin + (h - 2 * margin - s * wh) / 2;
    return { w, h, s, ox, oy, bar,
             X: (x) => ox + (x - this.world.x0) * s, Y: (y) => oy + (this.world.y1 - y) * s };
  }

  draw(values, scale, units) {
    if (!this.series) return;
    const ctx = this.ctx, L = this.layout();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
    const dpr = window.devicePixelRatio || 1;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const inv = scale > 0 ? 1 / scale : 0;
    const table = Colormap.table;
    const g = this.series.geometry;
    if (this.notice) {
      this.drawNotice(L);
      return;
    }
    if (g.kind === "grid") {
      const px = this.pixels.data;
      for (let p = 0; p < this.planes; p++)  // plane p occupies rows p·ny … of the offscreen image
        for (let r = 0; r < g.ny; r++) {
          const dst = (p * g.ny + g.ny - 1 - r) * g.nx;  // row 0 is the lowest y: at the bottom
          for (let c = 0; c < g.nx; c++) {
            const i = (p * g.ny + r) * g.nx + c, o = (dst + c) * 4;
            if (g.mask[i]) { px[o + 3] = 0; continue; }
            const t = Colormap.index(values[i] * inv) * 3;
            px[o] = table[t]; px[o + 1] = table[t + 1]; px[o + 2] = table[t + 2]; px[o + 3] = 255;
          }
        }
      this.offCtx.putImageData(this.pixels, 0, 0);
      ctx.imageSmoothingEnabled = true;
      ctx.imageSmoothingQuality = "medium";
      const w = g.nx * g.dx, h = this.world.y1 - this.world.y0;
      for (let p = 0; p < this.planes; p++)
        ctx.drawImage(this.off, 0, p * g.ny, g.nx, g.ny, L.X(this.world.x0 + p * this.pitch),
                      L.Y(this.world.y1), w * L.s, h * L.s);
    } else {
      this.drawMesh(values, inv, L);
    }
    const key = `${this.canvas.width}x${this.canvas.height}:${scale}:${units}`;
    if (key !== this.layerKey) {
      this.layer.width = this.canvas.width; this.layer.height = this.canvas.height;
      const main = this.ctx;
      this.ctx = this.layer.getContext("2d");
      this.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      this.drawOutline(L);
      this.drawElectrodes(L);
      this.drawOrientation(L);
      this.drawColourBar(L, scale, units);
      this.ctx = main;
      this.layerKey = key;
    }
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.drawImage(this.layer, 0, 0);
  }

  drawMesh(values, inv, L) {
    const g = this.series.geometry, nodes = g.nodes, els = g.elements;
    const onNodes = g.output_on === "nodes";
    const BINS = 128, paths = new Array(BINS);
    for (let e = 0; e < els.length; e++) {
      const [a, b, c] = els[e];
      const v = onNodes ? (values[a] + values[b] + values[c]) / 3 : values[e];
      const bin = Math.round(((Math.max(-1, Math.min(1, v * inv || 0)) + 1) * (BINS - 1)) / 2);
      const p = paths[bin] || (paths[bin] = new Path2D());
      p.moveTo(L.X(nodes[a][0]), L.Y(nodes[a][1]));
      p.lineTo(L.X(nodes[b][0]), L.Y(nodes[b][1]));
      p.lineTo(L.X(nodes[c][0]), L.Y(nodes[c][1]));
      p.closePath();
    }
    const ctx = this.ctx;
    ctx.lineWidth = 0.6;
    for (let i = 0; i < BINS; i++) {
      if (!paths[i]) continue;
      const colour = Colormap.css(-1 + (2 * i) / (BINS - 1));
      ctx.fillStyle = colour; ctx.strokeStyle = colour;  // stroke hides hairline seams
      ctx.fill(paths[i]); ctx.stroke(paths[i]);
    }
  }

  drawOutline(L) {
    const ctx = this.ctx;
    ctx.strokeStyle = "rgba(200,210,225,0.55)";
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    const g = this.series.geometry;
    if (g.kind === "grid") {
      const b = this.body;
      for (let p = 0; p < this.planes; p++) {
        const cx = L.X(b.cx + p * (this.planes > 1 ? this.pitch : 0));
        ctx.moveTo(cx + b.rx * L.s, L.Y(b.cy));
        ctx.ellipse(cx, L.Y(b.cy), b.rx * L.s, b.ry * L.s, 0, 0, 2 * Math.PI);
      }
      if (this.planes > 1) {  // each plane's height above it
        ctx.fillStyle = "#9aa6b5";
        ctx.font = "11px 'DejaVu Sans', sans-serif";
        ctx.textAlign = "center"; ctx.textBaseline = "bottom";
        for (let p = 0; p < this.planes; p++)
          ctx.fillText(`z = ${(g.z0 + p * g.dz).toPrecision(3)}`,
                       L.X(this.world.x0 + p * this.pitch + (g.nx * g.dx) / 2), L.Y(this.world.y1) - 4);
      }
    } else {
      const n = this.series.geometry.nodes;
      for (const [p, q] of this.boundary) {
        ctx.moveTo(L.X(n[p][0]), L.Y(n[p][1])); ctx.lineTo(L.X(n[q][0]), L.Y(n[q][1]));
      }
    }
    ctx.stroke();
  }

  drawNotice(L) {
    const ctx = this.ctx;
    ctx.fillStyle = "#c9d1db";
    ctx.font = "13px 'DejaVu Sans', sans-serif";
    ctx.textAlign = "center"; ctx.textBaseline = "middle";
    this.notice.split("\n").forEach((line, k) => ctx.fillText(line, L.w / 2, L.h / 2 + (k - 1) * 20));
  }

  drawElectrodes(L) {
    const ctx = this.ctx, b = this.body;
    ctx.font = "600 11px 'DejaVu Sans', sans-serif";
    ctx.textAlign = "center"; ctx.textBaseline = "middle";
    this.electrodes.forEach(([x, y], k) => {
      const sx = L.X(x), sy = L.Y(y);
      const dx = sx - L.X(b.cx), dy = sy - L.Y(b.cy), d = Math.hypot(dx, dy) || 1;
      ctx.fillStyle = "#e9eef5";
      ctx.beginPath(); ctx.arc(sx, sy, 4, 0, 2 * Math.PI); ctx.fill();
      ctx.fillStyle = k === 0 ? "#4fb3ff" : "#9aa6b5";
      ctx.fillText(String(k + 1), sx + (dx / d) * 15, sy + (dy / d) * 15);
    });
  }

  drawOrientation(L) {
    const ctx = this.ctx;
    const top = L.Y(this.world.y1), bottom = L.Y(this.world.y0);
    const left = L.X(this.world.x0), right = L.X(this.world.x1), mid = (left + right) / 2;
    ctx.fillStyle = "#7d8896";
    ctx.font = "700 12px 'DejaVu Sans', sans-serif";
    ctx.textAlign = "center"; ctx.textBaseline = "middle";
    ctx.fillText("ANTERIOR", mid, top - 38);
    ctx.fillText("POSTERIOR", mid, bottom + 38);
    ctx.fillText("R", left - 42, (top + bottom) / 2);
    ctx.fillText("L", right + 42, (top + bottom) / 2);
    ctx.font = "11px 'DejaVu Sans', sans-serif";
    ctx.textAlign = "left";
    ctx.fillText("viewed from the feet", 8, L.h - 10);
  }

  drawColourBar(L, scale, units) {
    const ctx = this.ctx;
    const x = L.w - L.bar + 18, w = 16, y0 = 40, h = Math.max(60, L.h - 90);
    for (let i = 0; i < h; i++) {
      ctx.fillStyle = Colormap.css(1 - (2 * i) / (h - 1));
      ctx.fillRect(x, y0 + i, w, 1.5);
    }
    ctx.strokeStyle = "#3a4656"; ctx.lineWidth = 1; ctx.strokeRect(x - 0.5, y0 - 0.5, w + 1, h + 1);
    ctx.fillStyle = "#c9d1db";
    ctx.font = "11px 'DejaVu Sans', sans-serif";
    ctx.textAlign = "left"; ctx.textBaseline = "middle";
    const fmt = (v) => (Math.abs(v) >= 100 || (Math.abs(v) < 0.01 && v !== 0)) ? v.toExponential(1) : v.toPrecision(2);
    for (const f of [1, 0.5, 0, -0.5, -1])
      ctx.fillText((f > 0 ? "+" : "") + fmt(f * scale), x + w + 5, y0 + ((1 - f) / 2) * (h - 1));
    ctx.save();
    ctx.translate(x - 8, y0 + h / 2); ctx.rotate(-Math.PI / 2);
    ctx.textAlign = "center"; ctx.fillStyle = "#7d8896";
    ctx.fillText(units || "", 0, 0);
    ctx.restore();
  }
}
