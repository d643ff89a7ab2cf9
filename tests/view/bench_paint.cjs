// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Times the span explorer in headless Chromium, from the page's own clock (performance marks it
// sets once a frame is painted): navigation start to the painted span table, a click on the
// first (slowest) span to its painted flame graph, and a click on the first span name to its. Usage: node bench_paint.cjs URL ROUNDS. Prints one line per round:
// "table_ms=N span_flame_ms=N name_flame_ms=N"; exits 77 when the browser cannot run here.
'use strict';

const PLAYWRIGHT = process.env.SPANPROF_PLAYWRIGHT_CORE ||
  '/opt/spanprof-test/node_modules/playwright-core';
const CHROMIUM = process.env.SPANPROF_CHROMIUM || '/usr/bin/chromium';
const [url, rounds] = process.argv.slice(2);

// The time of the page's last performance mark called name (ms since navigation start).
function markAt(page, name) {
  return page.waitForFunction((n) => {
    const m = performance.getEntriesByName(n);
    return m.length && m[m.length - 1].startTime;
  }, name);
}

// Clicks the first element matching sel inside the page; resolves to the ms from the click to
// the next "flame-painted" mark.
async function clickToFlame(page, sel) {
  const t0 = await page.evaluate((s) => {
    performance.clearMarks('flame-painted');
    const t = performance.now();
    document.querySelector(s).click();
    return t;
  }, sel);
  return (await (await markAt(page, 'flame-painted')).jsonValue()) - t0;
}

(async () => {
  let pw, browser;
  try {
    pw = require(PLAYWRIGHT);
    browser = await pw.chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  } catch (e) {
    console.log('cannot run: ' + e.message.split('\n')[0]);
    process.exit(77);
  }
  for (let r = 0; r < Number(rounds || 3); r++) {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(url);
    const table = await (await markAt(page, 'spans-painted')).jsonValue();
    const span = await clickToFlame(page, 'tr.span-row');
    await page.click('.tab[data-tab="names"]');
    const name = await clickToFlame(page, 'tr.name-row');
    console.log(`table_ms=${table.toFixed(1)} span_flame_ms=${span.toFixed(1)} name_flame_ms=${name.toFixed(1)}`);
    await page.close();
  }
  await browser.close();
})();
