/*
 * Renders the usage report (`lsp-assist usage --html`) in headless Chromium through
 * puppeteer-core, offline (every request that is not the file itself is refused and counted),
 * and prints one JSON line: what a reader would see clipped, the figures in the tables, the
 * charts and the empty-chart sentences. Saves a screenshot when spec.shot is set.
 * Called by tests/editors/test_usage_report_render.py with a JSON spec as argv[2].
 */
'use strict';

const path = require('node:path');

const spec = JSON.parse(process.argv[2]);
const puppeteer = require(path.join(spec.driverDir, 'node_modules', 'puppeteer-core'));

/** Runs in the page: every text that is cut, and the page's figures. */
function inspect() {
  const clipped = [];
  const tol = 1.0;
  const describe = (el) => `${el.tagName.toLowerCase()}${el.className && typeof el.className === 'string' ? '.' + el.className : ''}: ${(el.textContent || '').trim().slice(0, 60)}`;
  // 1. Charts: everything drawn inside an SVG lies inside its viewBox.
  for (const svg of document.querySelectorAll('svg')) {
    const vb = svg.viewBox.baseVal;
    const box = svg.getBBox();
    if (box.x < vb.x - tol || box.y < vb.y - tol || box.x + box.width > vb.x + vb.width + tol || box.y + box.height > vb.y + vb.height + tol) {
      clipped.push(`svg ${svg.getAttribute('aria-label')}: drawn ${JSON.stringify([box.x, box.y, box.width, box.height])} outside viewBox ${JSON.stringify([vb.x, vb.y, vb.width, vb.height])}`);
    }
    const r = svg.getBoundingClientRect();
    if (r.width < 50 || r.height < 50) clipped.push(`svg ${svg.getAttribute('aria-label')}: rendered ${r.width}x${r.height}`);
  }
  // 2. HTML text: no element's text overflows a box that hides overflow, and no text element
  //    is wider than its own box (a cut cell) or runs off the page.
  const pageWidth = document.documentElement.clientWidth;
  for (const el of document.body.querySelectorAll('h1,h2,h3,p,th,td,caption,figcaption')) {
    if (el.scrollWidth > el.clientWidth + tol && getComputedStyle(el).overflowX !== 'visible') {
      clipped.push(`${describe(el)} overflows its box`);
    }
    const r = el.getBoundingClientRect();
    let a = el.parentElement;
    while (a && a !== document.body) {
      const st = getComputedStyle(a);
      if (st.overflowX === 'hidden' || st.overflowX === 'clip') {
        const ar = a.getBoundingClientRect();
        if (r.right > ar.right + tol || r.left < ar.left - tol) clipped.push(`${describe(el)} cut by ${a.tagName}`);
      }
      a = a.parentElement;
    }
    if (!el.closest('.table-wrap') && r.right > pageWidth + tol) clipped.push(`${describe(el)} runs off the page`);
  }
  // A table wider than its scroll box shows cut columns until the reader scrolls: clipped too.
  let scrolled = 0;
  for (const w of document.querySelectorAll('.table-wrap')) {
    if (w.scrollWidth > w.clientWidth + tol) {
      scrolled += 1;
      clipped.push(`table ${describe(w.querySelector('caption') || w)} needs horizontal scrolling`);
    }
  }
  const figures = {};
  for (const td of document.querySelectorAll('td[data-figure]')) figures[td.dataset.figure] = td.textContent;
  return {
    clipped,
    figures,
    charts: [...document.querySelectorAll('svg')].map((s) => s.getAttribute('aria-label')),
    empty: [...document.querySelectorAll('p.empty')].map((p) => p.textContent),
    tables: document.querySelectorAll('table').length,
    scrolledTables: scrolled,
    pageWidth,
    pageHeight: document.documentElement.scrollHeight,
  };
}

(async () => {
  const result = { requests: [], errors: [] };
  let browser;
  try {
    browser = await puppeteer.launch({
      executablePath: spec.chromium,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
    });
    const page = await browser.newPage();
    await page.setViewport({ width: spec.width || 1280, height: 900 });
    await page.setRequestInterception(true);
    const target = 'file://' + spec.file;
    page.on('request', (req) => {
      if (req.url() === target) return req.continue();
      result.requests.push(req.url());
      return req.abort();
    });
    page.on('pageerror', (e) => result.errors.push(String(e)));
    await page.goto(target, { waitUntil: 'load', timeout: 60000 });
    Object.assign(result, await page.evaluate(inspect));
    if (spec.shot) await page.screenshot({ path: spec.shot, fullPage: true });
  } catch (e) {
    result.errors.push(String(e && e.stack ? e.stack : e));
  } finally {
    if (browser) await browser.close().catch(() => {});
  }
  process.stdout.write(JSON.stringify(result) + '\n');
})();
