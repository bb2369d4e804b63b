// Diverging colour map centred on zero: negative changes blue → cyan, zero near the background
// (no change is dark), positive red → yellow. colour(t) for t in [-1, 1] (clamped).
"use strict";
const Colormap = (() => {
  const stops = [
    [-1.0, [170, 232, 255]], [-0.55, [40, 140, 230]], [-0.2, [20, 60, 130]],
    [0.0, [18, 22, 28]],
    [0.2, [130, 30, 35]], [0.55, [225, 70, 45]], [1.0, [255, 224, 110]],
  ];
  const N = 512;
  const table = new Uint8ClampedArray(N * 3);  // t = -1 … 1
  for (let i = 0; i < N; i++) {
    const t = -1 + (2 * i) / (N - 1);
    let k = 0;
    while (k < stops.length - 2 && t > stops[k + 1][0]) k++;
    const [t0, c0] = stops[k], [t1, c1] = stops[k + 1];
    const f = Math.min(1, Math.max(0, (t - t0) / (t1 - t0)));
    for (let j = 0; j < 3; j++) table[i * 3 + j] = c0[j] + f * (c1[j] - c0[j]);
  }
  function index(t) {
    if (!(t > -1)) t = -1; else if (t > 1) t = 1;  // NaN → -1 end
    return Math.round(((t + 1) * (N - 1)) / 2);
  }
  function css(t) {
    const i = index(t) * 3;
    return `rgb(${table[i]},${table[i + 1]},${table[i + 2]})`;
  }
  return { table, N, index, css };
})();
