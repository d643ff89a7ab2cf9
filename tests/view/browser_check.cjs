// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// The span explorer in a real browser: headless Chromium (Debian's) driven by playwright-core.
// Usage: node browser_check.cjs URL SLOWEST_SPAN_ID SCREENSHOT.png
// Opens the page, checks that the span table lists SLOWEST_SPAN_ID first (slowest first by
// default), clicks it, and checks the flame graph: build_report (the CPU work of that span) and
// not check_health (the other span kind's); in the off-CPU view wait_for_disk (where it waited)
// and not build_report; a tooltip with file:line. Saves a screenshot. Prints one line per check;
// exits 0 when all hold, 1 when one fails, 77 when the browser cannot run here.
'use strict';

const PLAYWRIGHT = process.env.SPANPROF_PLAYWRIGHT_CORE ||
  '/opt/spanprof-test/node_modules/playwright-core';
const CHROMIUM = process.env.SPANPROF_CHROMIUM || '/usr/bin/chromium';
const [url, slowest, shot] = process.argv.slice(2);

let failed = 0;
function check(ok, what) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failed++;
}

async function frameNames(page) {
  return page.$$eval('#flame .frame', (els) => els.map((e) => e.dataset.name));
}

async function run(browser) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('pageerror', (e) => check(false, 'no script error on the page: ' + e.message));
  page.on('requestfailed', (r) => check(false, 'request ' + r.url() + ' failed'));
  const t0 = Date.now();
  await page.goto(url);
  await page.waitForSelector('body[data-spans-ready] tr.span-row');
  console.log(`     span table painted ${Date.now() - t0} ms after navigation`);
  const first = page.locator('tr.span-row').first();
  check(await first.getAttribute('data-span-id') === slowest,
    `the first row is the slowest span ${slowest} (got ${await first.getAttribute('data-span-id')})`);
  const t1 = Date.now();
  await first.click();
  await page.waitForSelector('body[data-profile-ready]');
  console.log(`     flame graph painted ${Date.now() - t1} ms after the click`);
  let names = await frameNames(page);
  check(names.includes('build_report'), 'wall-clock view holds build_report, which ran in the span');
  check(!names.includes('check_health'), 'wall-clock view holds no check_health (the other span kind)');
  check(names.includes('wait_for_disk'), 'wall-clock view holds wait_for_disk, where the span waited');
  const kind = (n) => page.getAttribute(`#flame .frame[data-name="${n}"]`, 'data-kind');
  check(await kind('build_report') === 'cpu' && await kind('wait_for_disk') === 'off',
    'build_report is drawn as CPU time, wait_for_disk as waiting');

  await page.click('#mode-off');
  await page.waitForSelector('body[data-profile-ready]');
  names = await frameNames(page);
  check(names.includes('wait_for_disk'), 'off-CPU view holds wait_for_disk');
  check(!names.includes('build_report'), 'off-CPU view holds no build_report');

  await page.click('#mode-cpu');
  names = await frameNames(page);
  check(names.includes('build_report') && !names.includes('wait_for_disk'),
    'CPU view holds build_report and not wait_for_disk');

  await page.click('#mode-wall');
  await page.hover('#flame .frame[data-name="build_report"]');
  const tip = await page.textContent('#tooltip');
  check(/view_workload\.c:\d+/.test(tip), `the tooltip names file:line (${tip.slice(0, 120)})`);
  await page.fill('#search', 'wait_for');
  await page.waitForFunction(() => document.querySelector('#search-info').textContent !== '');
  check(await page.locator('#flame .frame.match').count() > 0, 'search marks wait_for_disk');
  await page.fill('#search', '');
  await page.waitForFunction(() => document.querySelector('#search-info').textContent === '');
  await page.hover('#flame .frame[data-name="build_report"]');
  await page.screenshot({ path: shot, fullPage: true });
  console.log(`     screenshot: ${shot}`);
}

(async () => {
  let pw, browser;
  try {
    pw = require(PLAYWRIGHT);
  } catch (e) {
    console.log(`cannot run: playwright-core not found at ${PLAYWRIGHT} (scripts/setup-debian.sh installs it)`);
    process.exit(77);
  }
  try {
    browser = await pw.chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  } catch (e) {
    console.log(`cannot run: ${CHROMIUM} did not start: ${e.message.split('\n')[0]}`);
    process.exit(77);
  }
  try {
    await run(browser);
  } catch (e) {
    check(false, 'the page answered: ' + e.message.split('\n')[0]);
  } finally {
    await browser.close();
  }
  process.exit(failed ? 1 : 0);
})();
