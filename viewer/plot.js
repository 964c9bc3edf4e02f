// Small canvas line plots of diagnostics columns with a cursor at the current time.

const COLOURS = ['#1f77b4', '#ff7f0e', '#222222', '#2ca02c', '#d62728'];

/** series: [{label, values: Float64Array}], t: Float64Array, cursor: time or null. */
export function drawPlot(canvas, t, series, cursor) {
  const g = canvas.getContext('2d');
  const w = canvas.width, h = canvas.height, left = 44, bottom = 16, top = 14;
  g.clearRect(0, 0, w, h);
  let lo = Infinity, hi = -Infinity;
  for (const s of series) for (const v of s.values) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  if (!(hi > lo)) { hi = lo + 1; lo -= 1; }
  const t0 = t[0], t1 = t[t.length - 1] > t0 ? t[t.length - 1] : t0 + 1;
  const X = (x) => left + (w - left - 4) * (x - t0) / (t1 - t0);
  const Y = (y) => top + (h - top - bottom) * (1 - (y - lo) / (hi - lo));
  g.strokeStyle = '#ccc';
  g.strokeRect(left, top, w - left - 4, h - top - bottom);
  g.fillStyle = '#444';
  g.font = '10px sans-serif';
  g.fillText(hi.toPrecision(3), 2, top + 8);
  g.fillText(lo.toPrecision(3), 2, h - bottom);
  g.fillText(`${t0.toFixed(2)} s`, left, h - 3);
  g.fillText(`${t1.toFixed(2)} s`, w - 40, h - 3);
  series.forEach((s, k) => {
    g.strokeStyle = COLOURS[k % COLOURS.length];
    g.beginPath();
    s.values.forEach((v, i) => (i ? g.lineTo(X(t[i]), Y(v)) : g.moveTo(X(t[i]), Y(v))));
    g.stroke();
    g.fillStyle = g.strokeStyle;
    g.fillText(s.label, left + 4 + 62 * k, 10);
  });
  if (cursor !== null) {
    g.strokeStyle = '#d00';
    g.beginPath();
    g.moveTo(X(cursor), top);
    g.lineTo(X(cursor), h - bottom);
    g.stroke();
  }
}
