// Headless Chromium drives the viewer (viewer/test/run.sh): the run loads, the
// timeline advances, the heat map switches on, and the screenshots are not blank.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { PNG } from 'pngjs';

const [url, screenshotPath] = process.argv.slice(2);
const fail = (message) => { console.error(`browser test: FAIL: ${message}`); process.exit(1); };

/** Fraction of pixels of the 3D view that differ from its background colour. */
function nonBackgroundFraction(png, box) {
  const bg = [0xed, 0xf2, 0xfa];
  let count = 0, total = 0;
  for (let y = Math.floor(box.y); y < Math.floor(box.y + box.height); ++y)
    for (let x = Math.floor(box.x); x < Math.floor(box.x + box.width); ++x) {
      const i = 4 * (y * png.width + x);
      const d = Math.abs(png.data[i] - bg[0]) + Math.abs(png.data[i + 1] - bg[1]) +
                Math.abs(png.data[i + 2] - bg[2]);
      if (d > 24) ++count;
      ++total;
    }
  return count / total;
}

const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'clockwork-chromium-'));
// A fresh --user-data-dir (playwright passes it for a persistent context).
const browser = await chromium.launchPersistentContext(userDataDir, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1000, height: 640 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
         '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync',
         '--enable-unsafe-swiftshader'],
});
try {
  const page = browser.pages()[0] || await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url);
  await page.waitForFunction(() => window.viewerState && (window.viewerState.ready || window.viewerState.error),
                             null, { timeout: 30000 });
  const s0 = await page.evaluate(() => window.viewerState);
  if (s0.error) fail(`the viewer could not load the run: ${s0.error}`);
  if (errors.length) fail(`page errors: ${errors.join('; ')}`);
  // hanging_cloth until 0.1 s at 30 frames/s: frames 0..3.
  if (s0.frames !== 4) fail(`expected 4 frames, the viewer loaded ${s0.frames}`);
  if (s0.frame !== 0) fail(`expected to start at frame 0, at ${s0.frame}`);

  // Play: the timeline must advance by itself.
  await page.click('#play');
  await page.waitForFunction(() => window.viewerState.frame > 0, null, { timeout: 10000 });
  await page.click('#play');
  // Then the slider to the last frame.
  await page.$eval('#slider', (el) => { el.value = '3'; el.dispatchEvent(new Event('input')); });
  const s1 = await page.evaluate(() => window.viewerState);
  if (s1.frame !== 3) fail(`the slider should show frame 3, shows ${s1.frame}`);
  const label = await page.textContent('#frame-label');
  if (!label.includes('frame 3')) fail(`frame label '${label}'`);

  const box = await page.locator('#view canvas').boundingBox();
  await page.waitForTimeout(200);
  const surface = PNG.sync.read(await page.screenshot({ path: screenshotPath }));
  const covered = nonBackgroundFraction(surface, box);
  console.log(`surface colours: ${(100 * covered).toFixed(1)}% of the view is not background`);
  if (covered < 0.05) fail('the screenshot of the 3D view is blank');

  // The heat map: the event counts are in the PLY frames, so the mode is available.
  await page.selectOption('#colour-mode', 'events');
  await page.waitForTimeout(200);
  const heatPath = screenshotPath.replace(/\.png$/, '') + '-heat.png';
  const heat = PNG.sync.read(await page.screenshot({ path: heatPath }));
  const heatCovered = nonBackgroundFraction(heat, box);
  let changed = 0;
  for (let i = 0; i < heat.data.length; i += 4)
    if (heat.data[i] !== surface.data[i] || heat.data[i + 1] !== surface.data[i + 1]) ++changed;
  console.log(`heat map: ${(100 * heatCovered).toFixed(1)}% not background, ` +
              `${changed} pixels changed from the surface colours`);
  if (heatCovered < 0.05) fail('the heat-map screenshot is blank');
  if (changed < 1000) fail('switching to the heat map changed (almost) nothing');
  const legend = await page.isVisible('#legend');
  if (!legend) fail('no heat-map legend');
  console.log(`browser test: OK (screenshot ${screenshotPath})`);
} finally {
  await browser.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
