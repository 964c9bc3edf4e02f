// Reading a run's output folder over HTTP (docs/viewer.md): bodies.json,
// diagnostics.csv and frames/BODY_NNNNN.ply (positions, faces, and the cumulative
// per-vertex event counts when the run counted them).

export async function fetchText(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.text();
}

/** CSV with a header row -> {column: Float64Array}. */
export function parseCsv(text) {
  const lines = text.trim().split('\n');
  const header = lines[0].split(',');
  const columns = {};
  header.forEach((name) => { columns[name] = new Float64Array(lines.length - 1); });
  for (let i = 1; i < lines.length; ++i) {
    const fields = lines[i].split(',');
    header.forEach((name, k) => { columns[name][i - 1] = Number(fields[k]); });
  }
  return columns;
}

/** ASCII PLY as written by io/frame_io.cpp -> {positions, indices, events|null}. */
export function parsePly(text, url) {
  const end = text.indexOf('end_header\n');
  if (!text.startsWith('ply') || end < 0) throw new Error(`${url}: not an ASCII PLY file`);
  let vertexCount = 0, faceCount = 0, element = '';
  const properties = [];
  for (const line of text.slice(0, end).split('\n')) {
    const w = line.trim().split(/\s+/);
    if (w[0] === 'element') {
      element = w[1];
      if (element === 'vertex') vertexCount = Number(w[2]);
      if (element === 'face') faceCount = Number(w[2]);
    } else if (w[0] === 'property' && element === 'vertex') {
      properties.push(w[w.length - 1]);
    }
  }
  const ix = properties.indexOf('x'), ie = properties.indexOf('events');
  const rows = text.slice(end + 11).split('\n');
  const positions = new Float32Array(3 * vertexCount);
  const events = ie >= 0 ? new Float64Array(vertexCount) : null;
  for (let a = 0; a < vertexCount; ++a) {
    const f = rows[a].trim().split(/\s+/);
    for (let k = 0; k < 3; ++k) positions[3 * a + k] = Number(f[ix + k]);
    if (events) events[a] = Number(f[ie]);
  }
  const indices = [];
  for (let t = 0; t < faceCount; ++t) {
    const f = rows[vertexCount + t].trim().split(/\s+/).map(Number);
    for (let k = 2; k < f[0]; ++k) indices.push(f[1], f[k], f[k + 1]);  // fan
  }
  return { positions, indices, events };
}

export function framePath(body, frame) {
  return `frames/${body}_${String(frame).padStart(5, '0')}.ply`;
}

/**
 * Loads a whole run: {bodies, diagnostics, frames: [[{positions, indices, events}] per body]}.
 * `base` is the run folder's URL ending in '/'; `progress(k, n)` reports frames loaded.
 */
export async function loadRun(base, progress) {
  const manifest = JSON.parse(await fetchText(base + 'bodies.json'));
  const diagnostics = parseCsv(await fetchText(base + 'diagnostics.csv'));
  const bodies = manifest.bodies;
  const count = diagnostics.time.length;  // one diagnostics row per frame
  const frames = new Array(count);
  let done = 0;
  // A few requests in flight: fast on a local server, gentle on a single-threaded one.
  const queue = [...Array(count).keys()];
  async function worker() {
    while (queue.length) {
      const f = queue.shift();
      frames[f] = await Promise.all(bodies.map(async (b) => {
        const url = base + framePath(b.name, f);
        return parsePly(await fetchText(url), url);
      }));
      progress(++done, count);
    }
  }
  await Promise.all([worker(), worker(), worker(), worker()]);
  return { bodies, diagnostics, frames };
}
