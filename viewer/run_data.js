// Reading a run's output folder over HTTP (docs/viewer.md): bodies.json,
// diagnostics.csv and frames/BODY_NNNNN.ply (positions, faces, and the cumulative
// per-vertex event counts when the run counted them).

/**
 * The text of `name` (a path inside the run folder, e.g. 'frames/cloth_00010.ply'),
 * or an Error whose message names it: "frames/cloth_00010.ply: HTTP 404 Not Found".
 */
export async function fetchText(base, name) {
  let response;
  try {
    response = await fetch(base + name);
  } catch (e) {
    throw new Error(`${name}: cannot fetch (${e.message}): is 'clockwork view' still running?`);
  }
  if (!response.ok) throw new Error(`${name}: HTTP ${response.status} ${response.statusText}`.trim());
  return response.text();
}

/** `where()` names the place for the message (built only on failure: this runs per value). */
function finite(token, where) {
  const x = Number(token);
  if (token === undefined || token === '' || !Number.isFinite(x)) {
    throw new Error(`${where()}: '${token === undefined ? '' : token}' is not a finite number`);
  }
  return x;
}

/** CSV with a header row -> {column: Float64Array}; throws naming `name` and the line. */
export function parseCsv(text, name = 'csv') {
  if (!text.endsWith('\n')) throw new Error(`${name}: truncated inside its last row (no end of line)`);
  const lines = text.trim().split('\n');
  const header = lines[0].split(',');
  if (!header.includes('time')) throw new Error(`${name}:1: no 'time' column in the header`);
  if (lines.length < 2) throw new Error(`${name}: no rows after the header (a run writes one per frame)`);
  const columns = {};
  header.forEach((column) => { columns[column] = new Float64Array(lines.length - 1); });
  for (let i = 1; i < lines.length; ++i) {
    const fields = lines[i].split(',');
    if (fields.length !== header.length) {
      throw new Error(`${name}:${i + 1}: ${fields.length} fields, the header has ${header.length}`);
    }
    header.forEach((column, k) => {
      columns[column][i - 1] = finite(fields[k], () => `${name}:${i + 1}: column '${column}'`);
    });
  }
  return columns;
}

/**
 * ASCII PLY as written by io/frames/frame_io.cpp -> {positions, indices, events|null}.
 * Checked whole (the viewer must not draw a frame cut short): throws naming `name`.
 */
export function parsePly(text, name) {
  const end = text.indexOf('end_header\n');
  if (!text.startsWith('ply\n')) throw new Error(`${name}: not a PLY file (the first line is not 'ply')`);
  if (end < 0) throw new Error(`${name}: truncated header (no end_header)`);
  let vertexCount = -1, faceCount = -1, element = '';
  const properties = [];
  for (const line of text.slice(0, end).split('\n')) {
    const w = line.trim().split(/\s+/);
    if (w[0] === 'format' && w[1] !== 'ascii') throw new Error(`${name}: '${line}': only ASCII PLY frames are read`);
    if (w[0] === 'element') {
      element = w[1];
      if (element === 'vertex') vertexCount = Number(w[2]);
      if (element === 'face') faceCount = Number(w[2]);
    } else if (w[0] === 'property' && element === 'vertex') {
      properties.push(w[w.length - 1]);
    }
  }
  if (!Number.isInteger(vertexCount) || vertexCount < 0 || !Number.isInteger(faceCount) || faceCount < 0) {
    throw new Error(`${name}: the header has no vertex and face counts`);
  }
  const ix = properties.indexOf('x'), ie = properties.indexOf('events');
  if (ix < 0 || properties[ix + 1] !== 'y' || properties[ix + 2] !== 'z') {
    throw new Error(`${name}: no vertex properties x, y, z in the header`);
  }
  if (!text.endsWith('\n')) throw new Error(`${name}: truncated inside its last row`);
  const rows = text.slice(end + 11).split('\n');
  rows.pop();  // after the last newline
  if (rows.length < vertexCount + faceCount) {
    throw new Error(`${name}: truncated: ${rows.length} rows, the header declares ` +
                    `${vertexCount} vertices and ${faceCount} faces`);
  }
  const firstRow = text.slice(0, end).split('\n').length + 1;  // line number of row 0
  const line = (k) => `${name}:${firstRow + k}`;
  const positions = new Float32Array(3 * vertexCount);
  const events = ie >= 0 ? new Float64Array(vertexCount) : null;
  for (let a = 0; a < vertexCount; ++a) {
    const f = rows[a].trim().split(/\s+/);
    if (f.length !== properties.length) {
      throw new Error(`${line(a)}: vertex ${a}: ${f.length} values, the header declares ${properties.length}`);
    }
    for (let k = 0; k < 3; ++k) positions[3 * a + k] = finite(f[ix + k], () => `${line(a)}: vertex ${a}`);
    if (events) events[a] = finite(f[ie], () => `${line(a)}: vertex ${a}`);
  }
  const indices = [];
  for (let t = 0; t < faceCount; ++t) {
    const row = vertexCount + t;
    const f = rows[row].trim().split(/\s+/).map(Number);
    if (!(f[0] >= 3) || f.length !== f[0] + 1 ||
        f.slice(1).some((i) => !Number.isInteger(i) || i < 0 || i >= vertexCount)) {
      throw new Error(`${line(row)}: face ${t}: '${rows[row]}' is not a face of the ${vertexCount} vertices`);
    }
    for (let k = 2; k < f[0]; ++k) indices.push(f[1], f[k], f[k + 1]);  // fan
  }
  if (rows.slice(vertexCount + faceCount).some((r) => r.trim() !== '')) {
    throw new Error(`${name}: more rows than the header declares (${vertexCount} vertices, ${faceCount} faces)`);
  }
  return { positions, indices, events };
}

export function framePath(body, frame) {
  return `frames/${body}_${String(frame).padStart(5, '0')}.ply`;
}

/**
 * Loads a whole run: {bodies, diagnostics, frames: [[{positions, indices, events}] per body]}.
 * `base` is the run folder's URL ending in '/'; `progress(k, n)` reports frames loaded.
 * Rejects with an Error naming the first file that is missing or damaged (and stops
 * loading: no progress is reported after a failure), or a frame whose vertex or face
 * count differs from its body's frame 0.
 */
export async function loadRun(base, progress) {
  let manifest;
  try {
    manifest = JSON.parse(await fetchText(base, 'bodies.json'));
  } catch (e) {
    throw e instanceof SyntaxError ? new Error(`bodies.json: not valid JSON (${e.message})`) : e;
  }
  const bodies = manifest && manifest.bodies;
  if (!Array.isArray(bodies) || bodies.length === 0 || bodies.some((b) => typeof b.name !== 'string')) {
    throw new Error('bodies.json: /bodies: expected a non-empty list of bodies with names');
  }
  const diagnostics = parseCsv(await fetchText(base, 'diagnostics.csv'), 'diagnostics.csv');
  const count = diagnostics.time.length;  // one diagnostics row per frame
  const frames = new Array(count);
  let done = 0, failed = false;
  // A few requests in flight: fast on a local server, gentle on a single-threaded one.
  const queue = [...Array(count).keys()];
  async function worker() {
    while (queue.length && !failed) {
      const f = queue.shift();
      try {
        frames[f] = await Promise.all(bodies.map(async (b) => {
          const name = framePath(b.name, f);
          return parsePly(await fetchText(base, name), name);
        }));
      } catch (e) {
        failed = true;  // the other workers stop: the progress line must not hide the error
        throw e;
      }
      if (!failed) progress(++done, count);
    }
  }
  await Promise.all([worker(), worker(), worker(), worker()]);
  bodies.forEach((b, k) => {
    const first = frames[0][k];
    for (let f = 1; f < count; ++f) {
      const d = frames[f][k], name = framePath(b.name, f);
      if (d.positions.length !== first.positions.length) {
        throw new Error(`${name}: ${d.positions.length / 3} vertices, frame 0 has ${first.positions.length / 3}`);
      }
      if (d.indices.length !== first.indices.length) {
        throw new Error(d.indices.length === 0 ? `${name}: no faces (frame 0 has ${first.indices.length / 3})`
          : `${name}: ${d.indices.length / 3} triangles, frame 0 has ${first.indices.length / 3}`);
      }
    }
  });
  return { bodies, diagnostics, frames };
}
