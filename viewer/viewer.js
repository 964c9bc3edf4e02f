// Clockwork browser viewer (docs/viewer.md). The run folder comes from the URL
// parameter `run` (relative to this page), default '/run/' as `clockwork view` serves it.
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import { loadRun } from './run_data.js';
import { drawPlot } from './plot.js';
import { colourAt, drawLegend, eventRates, rateRange, rateToUnit } from './heat.js';

const $ = (id) => document.getElementById(id);
// State the browser test reads (viewer/test/browser_test.mjs).
const state = { ready: false, error: null, frame: 0, frames: 0, playing: false, mode: 'surface' };
window.viewerState = state;

/** On the page, not only in the console: the message names the file that failed. */
function showError(message) {
  state.error = message;
  window.showViewerError(message);  // index.html: also catches errors before this module runs
}

const params = new URLSearchParams(location.search);
let base = params.get('run') || '/run/';
if (!base.endsWith('/')) base += '/';
const baseUrl = new URL(base, location.href).href;
$('run-name').textContent = base;

const FRONT = [0xee8030, 0x4cb35a, 0xbf59b3], BACK = [0x4080d9, 0xd9cc40, 0x59bfcc];

const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
renderer.setPixelRatio(window.devicePixelRatio);
$('view').appendChild(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0xedf2fa);
const camera = new THREE.PerspectiveCamera(40, 1, 1e-3, 1e3);
camera.up.set(0, 0, 1);  // scenes are z-up
const controls = new OrbitControls(camera, renderer.domElement);
scene.add(new THREE.HemisphereLight(0xffffff, 0x667080, 1.6));
const headlight = new THREE.DirectionalLight(0xffffff, 1.4);
camera.add(headlight);
scene.add(camera);

function resize() {
  const el = $('view');
  renderer.setSize(el.clientWidth, el.clientHeight);
  camera.aspect = el.clientWidth / Math.max(1, el.clientHeight);
  camera.updateProjectionMatrix();
}
window.addEventListener('resize', resize);

let run = null, meshes = [], range = null;

function buildMeshes() {
  let deformable = 0;
  meshes = run.bodies.map((body, b) => {
    const first = run.frames[0][b];
    const geometry = new THREE.BufferGeometry();
    geometry.setAttribute('position', new THREE.BufferAttribute(first.positions.slice(), 3));
    geometry.setAttribute('color', new THREE.BufferAttribute(new Float32Array(first.positions.length), 3));
    geometry.setIndex(first.indices);
    const group = new THREE.Group();
    const k = deformable % 3;
    const surface = body.obstacle
      ? [new THREE.MeshLambertMaterial({ color: 0x9ea3ad, side: THREE.DoubleSide })]
      : [new THREE.MeshLambertMaterial({ color: FRONT[k], side: THREE.FrontSide }),
         new THREE.MeshLambertMaterial({ color: BACK[k], side: THREE.BackSide })];
    if (!body.obstacle) ++deformable;
    const heat = new THREE.MeshLambertMaterial({ vertexColors: true, side: THREE.DoubleSide });
    const surfaceMeshes = surface.map((m) => new THREE.Mesh(geometry, m));
    const heatMesh = new THREE.Mesh(geometry, heat);
    surfaceMeshes.forEach((m) => group.add(m));
    group.add(heatMesh);
    scene.add(group);
    return { geometry, surfaceMeshes, heatMesh };
  });
}

function frameCamera() {
  const box = new THREE.Box3();
  run.bodies.forEach((body, b) => {
    if (body.obstacle) return;
    for (const f of run.frames) {
      const p = f[b].positions;
      for (let i = 0; i < p.length; i += 3) box.expandByPoint(new THREE.Vector3(p[i], p[i + 1], p[i + 2]));
    }
  });
  if (box.isEmpty()) meshes.forEach((m) => { m.geometry.computeBoundingBox(); box.union(m.geometry.boundingBox); });
  const centre = box.getCenter(new THREE.Vector3());
  const radius = Math.max(box.getSize(new THREE.Vector3()).length() / 2, 1e-3);
  const distance = 1.1 * radius / Math.sin((camera.fov / 2) * Math.PI / 180);
  camera.position.copy(centre).add(new THREE.Vector3(0.55, -1, 0.5).normalize().multiplyScalar(distance));
  camera.near = distance / 1000;
  camera.far = distance * 100;
  camera.updateProjectionMatrix();
  controls.target.copy(centre);
  controls.update();
}

function showFrame(f) {
  state.frame = f;
  const heat = state.mode === 'events' && range;
  run.bodies.forEach((body, b) => {
    const m = meshes[b], data = run.frames[f][b];
    m.geometry.attributes.position.array.set(data.positions);
    m.geometry.attributes.position.needsUpdate = true;
    m.geometry.computeVertexNormals();
    m.geometry.computeBoundingSphere();
    const rates = heat ? eventRates(run.frames, run.diagnostics.time, b, f) : null;
    if (rates) {
      const colour = m.geometry.attributes.color.array;
      rates.forEach((r, a) => colour.set(colourAt(rateToUnit(r, range)), 3 * a));
      m.geometry.attributes.color.needsUpdate = true;
    }
    m.heatMesh.visible = !!rates;
    m.surfaceMeshes.forEach((s) => { s.visible = !rates; });
  });
  const t = run.diagnostics.time[f];
  $('slider').value = String(f);
  $('frame-label').textContent = `frame ${f} / ${state.frames - 1}   t = ${t.toFixed(4)} s`;
  drawPlots(t);
}

function drawPlots(cursor) {
  const d = run.diagnostics;
  drawPlot($('plot-energy'), d.time, [{ label: 'kinetic', values: d.kinetic },
    { label: 'potential', values: d.potential }, { label: 'total', values: d.total }], cursor);
  if (d.active_layers) drawPlot($('plot-contact'), d.time, [{ label: 'layers', values: d.active_layers }], cursor);
}

/** PNG plots of `clockwork plot`, when the run folder has them. */
function addPngPlots() {
  for (const name of ['energy', 'momentum', 'contact', 'event_periods']) {
    const img = new Image();
    img.onload = () => $('png-plots').appendChild(img);
    img.src = `${baseUrl}plots/${name}.png`;
    img.alt = name;
  }
}

let lastTick = 0;
function animate(now) {
  requestAnimationFrame(animate);
  if (state.playing && run && now - lastTick > 1000 / 30) {
    lastTick = now;
    showFrame((state.frame + 1) % state.frames);
  }
  controls.update();
  renderer.render(scene, camera);
}

function setPlaying(on) {
  state.playing = on;
  $('play').textContent = on ? '⏸' : '▶';
}

async function main() {
  resize();
  requestAnimationFrame(animate);
  try {
    run = await loadRun(baseUrl, (k, n) => { $('status').textContent = `loading frames ${k} / ${n}`; });
  } catch (e) {
    showError(`cannot load the run ${base}: ${e.message}`);
    return;
  }
  state.frames = run.frames.length;
  $('slider').max = String(state.frames - 1);
  range = rateRange(run.frames, run.diagnostics.time, run.bodies.length);
  if (range) drawLegend($('legend'), range);
  else $('colour-mode').options[1].disabled = true;
  const contact = !!run.diagnostics.active_layers;
  $('plot-contact').hidden = $('contact-title').hidden = !contact;
  buildMeshes();
  frameCamera();
  showFrame(0);
  addPngPlots();
  $('status').textContent = `${state.frames} frames, ${run.bodies.length} bodies` +
    (range ? '' : ' (no event counts in the PLY frames: no heat map)');
  $('slider').addEventListener('input', () => { setPlaying(false); showFrame(Number($('slider').value)); });
  $('play').addEventListener('click', () => setPlaying(!state.playing));
  window.addEventListener('keydown', (e) => { if (e.code === 'Space') { e.preventDefault(); setPlaying(!state.playing); } });
  $('colour-mode').addEventListener('change', () => {
    state.mode = $('colour-mode').value;
    $('legend').hidden = state.mode !== 'events';
    showFrame(state.frame);
  });
  state.ready = true;
}

main();
