// The viewer's reading of a run (viewer/run_data.js) under node, no browser: a whole
// run loads; a missing, cut or changed frame rejects with a message naming the file,
// and no progress is reported after the failure (the page showed "loading frames
// 10 / 11" over the error before). Run by tests/io/frames/test_run_folders.cpp:
//   node viewer/test/run_data_test.mjs CHAIN_RUN CLOTH_RUN
// (two output folders of `clockwork run`: a chain without faces, a cloth with them).
import fs from 'node:fs';
import path from 'node:path';
import { loadRun, parseCsv, parsePly } from '../run_data.js';

const [chainDir, clothDir] = process.argv.slice(2);
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };

/** The run folder's files by name, served by a fetch that answers 404 for the rest. */
function readRun(dir) {
  const files = {};
  for (const name of ['bodies.json', 'diagnostics.csv']) files[name] = fs.readFileSync(path.join(dir, name), 'utf8');
  for (const name of fs.readdirSync(path.join(dir, 'frames'))) {
    if (name.endsWith('.ply')) files[`frames/${name}`] = fs.readFileSync(path.join(dir, 'frames', name), 'utf8');
  }
  return files;
}
const base = 'http://127.0.0.1:1/run/';
function serve(files) {
  globalThis.fetch = async (url) => {
    const name = url.slice(base.length);
    await new Promise((r) => setTimeout(r, 1));  // answers arrive out of order
    if (!(name in files)) return { ok: false, status: 404, statusText: 'Not Found' };
    return { ok: true, status: 200, statusText: 'OK', text: async () => files[name] };
  };
}

/** loadRun over `files`: {run} or {error, progressAfter} (progress calls after the failure). */
async function load(files) {
  serve(files);
  let failedAt = null, progressAfter = 0;
  try {
    const run = await loadRun(base, () => { if (failedAt !== null) ++progressAfter; });
    return { run };
  } catch (e) {
    failedAt = Date.now();
    await new Promise((r) => setTimeout(r, 50));  // let the other workers finish
    return { error: e.message, progressAfter };
  }
}

async function expectError(label, files, ...parts) {
  const r = await load(files);
  check(r.error !== undefined, `${label}: loaded, expected an error`);
  if (r.error === undefined) return;
  for (const p of parts) check(r.error.includes(p), `${label}: '${r.error}' lacks '${p}'`);
  check(r.progressAfter === 0, `${label}: ${r.progressAfter} progress reports after the error`);
}

const chain = readRun(chainDir), cloth = readRun(clothDir);
const frames = Object.keys(chain).filter((n) => n.startsWith('frames/')).length;

const whole = await load(chain);
check(whole.run && whole.run.frames.length === frames, `the whole chain run: ${whole.error}`);
const wholeCloth = await load(cloth);
check(wholeCloth.run && wholeCloth.run.frames[0][0].indices.length > 0, `the whole cloth run: ${wholeCloth.error}`);

// A missing frame: the 404 names it.
const gap = { ...chain };
delete gap['frames/chain_00002.ply'];
await expectError('missing frame', gap, 'frames/chain_00002.ply: HTTP 404');

// A frame cut short at a row boundary, and inside a number.
const text = chain['frames/chain_00003.ply'];
const cut = text.slice(0, text.lastIndexOf('\n', text.length - 2) + 1);
await expectError('truncated PLY', { ...chain, 'frames/chain_00003.ply': cut }, 'frames/chain_00003.ply', 'truncated');
await expectError('PLY cut inside a row', { ...chain, 'frames/chain_00003.ply': text.slice(0, text.length - 5) },
                  'frames/chain_00003.ply', 'truncated');
await expectError('empty PLY', { ...chain, 'frames/chain_00001.ply': '' }, 'frames/chain_00001.ply', 'not a PLY file');

// A vertex count that changes: one vertex row and its count removed.
const lines = text.split('\n');
const header = lines.indexOf('end_header');
const fewer = lines.filter((_, i) => i !== header + 1).join('\n')
  .replace(/element vertex (\d+)/, (_, n) => `element vertex ${Number(n) - 1}`);
await expectError('vertex count', { ...chain, 'frames/chain_00003.ply': fewer },
                  'frames/chain_00003.ply: 12 vertices, frame 0 has 13');

// A cloth frame without its faces.
const c2 = cloth['frames/cloth_00002.ply'];
const c2lines = c2.split('\n');
const vertices = Number(/element vertex (\d+)/.exec(c2)[1]);
const faceless = c2lines.slice(0, c2lines.indexOf('end_header') + 1 + vertices).join('\n')
  .replace(/element face \d+/, 'element face 0') + '\n';
await expectError('no faces', { ...cloth, 'frames/cloth_00002.ply': faceless }, 'frames/cloth_00002.ply: no faces');

// Garbled diagnostics and manifest.
await expectError('diagnostics cut', { ...chain, 'diagnostics.csv': chain['diagnostics.csv'].slice(0, -3) },
                  'diagnostics.csv', 'truncated');
await expectError('diagnostics missing', Object.fromEntries(Object.entries(chain).filter(([n]) => n !== 'diagnostics.csv')),
                  'diagnostics.csv: HTTP 404');
await expectError('manifest garbled', { ...chain, 'bodies.json': '{"bodies": [' }, 'bodies.json: not valid JSON');

// The parsers alone.
let message = '';
try { parseCsv('time,x\n0,1\n1,nan\n', 'diagnostics.csv'); } catch (e) { message = e.message; }
check(message.includes("diagnostics.csv:3: column 'x': 'nan' is not a finite number"), `parseCsv: '${message}'`);
message = '';
try { parsePly('ply\nformat binary_little_endian 1.0\nend_header\n', 'frames/a_00000.ply'); } catch (e) { message = e.message; }
check(message.includes('frames/a_00000.ply') && message.includes('only ASCII'), `parsePly binary: '${message}'`);

if (failures.length) {
  for (const f of failures) console.error(`run_data_test: FAIL: ${f}`);
  process.exit(1);
}
console.log('run_data_test: all checks passed');
