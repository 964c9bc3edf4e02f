// The asynchrony heat map: each vertex coloured by its event rate, i.e. the events
// that touched it between two frames divided by the frame interval (events per
// simulated second), on a logarithmic scale.

// Perceptually ordered stops (dark blue → purple → orange → pale yellow).
const STOPS = [[0.05, 0.03, 0.25], [0.35, 0.06, 0.50], [0.75, 0.20, 0.35],
               [0.97, 0.55, 0.10], [0.99, 0.95, 0.60]];

export function colourAt(u) {
  const x = Math.min(Math.max(u, 0), 1) * (STOPS.length - 1);
  const i = Math.min(Math.floor(x), STOPS.length - 2), f = x - i;
  return STOPS[i].map((c, k) => c + f * (STOPS[i + 1][k] - c));
}

/** Per-vertex rates at frame f from cumulative counts (frame 0 uses the first interval). */
export function eventRates(frames, times, body, f) {
  const g = f === 0 ? Math.min(1, frames.length - 1) : f;
  const now = frames[g][body].events, before = g > 0 ? frames[g - 1][body].events : null;
  if (!now) return null;
  const dt = g > 0 ? times[g] - times[g - 1] : 0;
  const rates = new Float64Array(now.length);
  if (dt > 0) for (let a = 0; a < now.length; ++a) rates[a] = (now[a] - before[a]) / dt;
  return rates;
}

/** Log-scale range [lo, hi] over every frame and body: hi the largest rate, lo ≥ hi/1e4. */
export function rateRange(frames, times, bodyCount) {
  let lo = Infinity, hi = 0;
  for (let f = 1; f < frames.length; ++f)
    for (let b = 0; b < bodyCount; ++b) {
      const r = eventRates(frames, times, b, f);
      if (!r) continue;
      for (const v of r) if (v > 0) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    }
  if (!(hi > 0)) return null;
  return { lo: Math.max(lo, hi / 1e4), hi: Math.max(hi, lo * 1.0001) };
}

export function rateToUnit(rate, range) {
  if (!(rate > 0)) return 0;
  return (Math.log(rate) - Math.log(range.lo)) / (Math.log(range.hi) - Math.log(range.lo));
}

export function drawLegend(canvas, range) {
  const g = canvas.getContext('2d');
  g.clearRect(0, 0, canvas.width, canvas.height);
  for (let x = 0; x < canvas.width; ++x) {
    const c = colourAt(x / (canvas.width - 1)).map((v) => Math.round(255 * v));
    g.fillStyle = `rgb(${c[0]},${c[1]},${c[2]})`;
    g.fillRect(x, 0, 1, 18);
  }
  g.fillStyle = '#222';
  g.font = '11px sans-serif';
  g.fillText(range.lo.toPrecision(3), 2, 32);
  const hi = range.hi.toPrecision(3);
  g.fillText(hi, canvas.width - g.measureText(hi).width - 2, 32);
  g.fillText('events per simulated s per vertex (log)', 2, 44);
}
