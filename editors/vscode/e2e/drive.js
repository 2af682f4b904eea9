/*
 * Drives a real VS Code (code-server in headless Chromium, through puppeteer-core) the way a
 * user would: opens a file, types, waits for the ghost text, accepts it with Tab, reads the
 * status bar item, escalates with Ctrl+Alt+\ and accepts the quality suggestion, and (when
 * asked) waits for the unreachable-endpoint toast. Called by tests/editors/test_vscode_real.py
 * with a JSON spec as argv[2]; prints one JSON result line; saves screenshots in spec.shots.
 *
 * Ghost-text timing: a MutationObserver in the page stamps (Date.now()) every change of the
 * ghost-text decorations, so the test can compare it with the fake model's first-token time
 * (same machine clock).
 */
'use strict';

const fs = require('node:fs/promises');
const path = require('node:path');

const spec = JSON.parse(process.argv[2]);
const puppeteer = require(path.join(spec.driverDir, 'node_modules', 'puppeteer-core'));

const result = { steps: [], errors: [], shots: [] };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(page, what, fn, timeoutMs, ...args) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    last = await page.evaluate(fn, ...args).catch((e) => ({ __error: String(e) }));
    if (last && !last.__error) {
      result.steps.push(what);
      return last;
    }
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}

/** Waits (bounded) until `file` exists and contains `text`: a server-side record. */
async function holdUntil(file, text, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const body = await fs.readFile(file, 'utf8').catch(() => '');
    if (body.includes(text)) {
      result.steps.push(`held until ${path.basename(file)} had ${text}`);
      return;
    }
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${text} in ${file}`);
}

async function shot(page, name) {
  const file = path.join(spec.shots, `${name}.png`);
  await page.screenshot({ path: file });
  result.shots.push(file);
}

/** Text of the editor lines, in order (VS Code renders spaces as U+00A0). */
function editorLines() {
  const lines = [...document.querySelectorAll('.monaco-editor .view-lines .view-line')];
  lines.sort((a, b) => parseFloat(a.style.top || '0') - parseFloat(b.style.top || '0'));
  return lines.map((l) => l.textContent.replace(/\u00a0/g, ' '));
}

function installGhostObserver() {
  window.__ghost = [];
  const read = () =>
    [...document.querySelectorAll('[class*="ghost-text-decoration"], .ghost-text')]
      .map((e) => e.textContent.replace(/\u00a0/g, ' '))
      .join('');
  let last = '';
  const note = () => {
    const now = read();
    if (now !== last) {
      last = now;
      window.__ghost.push({ t: Date.now(), text: now });
    }
  };
  new MutationObserver(note).observe(document.body, { subtree: true, childList: true, characterData: true });
  return true;
}

function ghostText() {
  return [...document.querySelectorAll('[class*="ghost-text-decoration"], .ghost-text')]
    .map((e) => e.textContent.replace(/\u00a0/g, ' '))
    .join('');
}

/**
 * What the user sees of the ghost text right now: the inline part on the cursor line, the
 * ghost lines below it (a view zone), and where the cursor is (status bar "Ln, Col" and the
 * cursor element's pixel position).
 */
function ghostView() {
  const clean = (e) => e.textContent.replace(/\u00a0/g, ' ');
  const inline = [...document.querySelectorAll('.view-lines [class*="ghost-text-decoration"]')].map(clean).join('');
  // The ghost's further lines are a view zone below the cursor line.
  const below = [...document.querySelectorAll('.view-zones .suggest-preview-text .view-line')].map(clean);
  const sel = document.querySelector('[id="status.editor.selection"]');
  const cursor = document.querySelector('.monaco-editor.focused .cursors-layer .cursor') ||
    document.querySelector('.monaco-editor .cursors-layer .cursor');
  return {
    inline,
    below,
    lines: (inline ? 1 : 0) + below.length,
    selection: sel ? sel.textContent.trim() : '',
    cursorAt: cursor ? `${cursor.style.top},${cursor.style.left}` : '',
  };
}

/** Records every change of ghostView() with Date.now() in window.__views. */
function installViewObserver(viewSource) {
  // eslint-disable-next-line no-new-func
  const view = new Function(`return (${viewSource})();`);
  window.__views = [];
  let last = '';
  const note = () => {
    const now = view();
    const key = JSON.stringify([now.inline, now.below, now.selection]);
    if (key !== last) {
      last = key;
      window.__views.push({ t: Date.now(), ...now });
    }
  };
  new MutationObserver(note).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  return true;
}

/** Records every text the status bar and the notifications show, with Date.now(), in window.__shown. */
function installStatusObserver() {
  window.__shown = [];
  const seen = new Set();
  const note = () => {
    const items = [...document.querySelectorAll('.statusbar-item, .notifications-toasts .notification-toast')];
    for (const e of items) {
      const text = (e.textContent || '').trim();
      const aria = e.getAttribute('aria-label') || (e.querySelector('[aria-label]') || { getAttribute: () => '' }).getAttribute('aria-label') || '';
      const key = `${e.className}|${text}|${aria}`;
      if (text && !seen.has(key)) {
        seen.add(key);
        window.__shown.push({ t: Date.now(), kind: e.classList.contains('statusbar-item') ? 'status' : 'toast', text, aria });
      }
    }
  };
  new MutationObserver(note).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  note();
  return true;
}

async function typeLine(page, text) {
  await page.keyboard.type(text, { delay: spec.keyDelayMs ?? 40 });
  return page.evaluate(() => Date.now());
}

/** What the page shows of a next edit: struck-through text, `after` decoration contents, gutter
 * markers, each with its line number (the margin's number at the same height), and the
 * status bar's "Ln, Col". */
function nextEditView() {
  const clean = (t) => (t || '').replace(/\u00a0/g, ' ');
  const numbers = new Map();
  for (const m of document.querySelectorAll('.monaco-editor .margin-view-overlays > div')) {
    const n = m.querySelector('.line-numbers');
    if (n) {
      numbers.set(m.style.top, parseInt(n.textContent, 10));
    }
  }
  const struck = [];
  const after = [];
  for (const line of document.querySelectorAll('.monaco-editor .view-lines .view-line')) {
    const lineNo = numbers.get(line.style.top);
    for (const span of line.querySelectorAll('span')) {
      if (span.children.length === 0 && getComputedStyle(span).textDecorationLine.includes('line-through')) {
        struck.push({ line: lineNo, text: clean(span.textContent), lineText: clean(line.textContent) });
      }
      const content = getComputedStyle(span, '::after').content;
      if (content && content !== 'none' && content !== 'normal' && content !== '""') {
        after.push({ line: lineNo, text: clean(JSON.parse(content)) });
      }
    }
  }
  const gutter = document.querySelectorAll('.monaco-editor .glyph-margin-widgets .cgmr, .monaco-editor .glyph-margin .cgmr').length;
  const sel = document.querySelector('[id="status.editor.selection"]');
  const status = [...document.querySelectorAll('.statusbar-item')].map((e) => (e.textContent || '').trim()).filter((t) => t.includes('next edit'));
  return { struck, after, gutter, selection: sel ? sel.textContent.trim() : '', status };
}

/** Next edit: rename a parameter, see the edit at its next use, Tab jumps, Tab applies, the
 * following one appears, Escape dismisses it. */
async function nextEdit(page) {
  const view = () => page.evaluate((src) => new Function(`return (${src})();`)(), nextEditView.toString());
  const until = (what, pred, timeoutMs) =>
    waitFor(page, what, (src, predSrc) => {
      const v = new Function(`return (${src})();`)();
      return new Function('v', `return (${predSrc})(v);`)(v) ? v : null;
    }, timeoutMs, nextEditView.toString(), pred.toString());
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyG');
  await page.keyboard.up('Control');
  await sleep(500);
  await page.keyboard.type(`${spec.defRow + 1}:${spec.col + 1}`, { delay: 20 });
  await page.keyboard.press('Enter');
  await sleep(500);
  for (let i = 0; i < spec.old.length; i++) {
    await page.keyboard.down('Shift');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.up('Shift');
  }
  result.typedAt = await typeLine(page, spec.new);
  const shownPred = new Function('v', `return v.struck.some((s) => s.line === ${spec.nextRow + 1} && s.text === ${JSON.stringify(spec.old)}) && v.after.some((a) => a.line === ${spec.nextRow + 1} && a.text === ${JSON.stringify(spec.new)});`);
  result.shown = await until('next edit shown', shownPred, 15_000);
  result.shownAt = await page.evaluate(() => Date.now());
  result.linesShown = await page.evaluate(editorLines);
  await shot(page, 'next-edit-shown');
  // To the top of the file (off the rename's line, where an inline ghost would take Tab
  // first): the edit is off screen, the status item says where; Tab jumps there.
  await page.keyboard.down('Control');
  await page.keyboard.press('Home');
  await page.keyboard.up('Control');
  result.offScreen = await until('off-screen status', new Function('v', `return v.status.some((t) => t.includes(${JSON.stringify(`next edit: line ${spec.nextRow + 1}`)}));`), 5_000);
  await shot(page, 'next-edit-off-screen');
  await page.keyboard.press('Tab');
  const at = `Ln ${spec.nextRow + 1}, Col ${spec.nextCol + 1}`;
  result.jumped = await until('jumped', new Function('v', `return v.selection === ${JSON.stringify(at)};`), 5_000);
  await page.keyboard.press('Tab');
  result.accepted = await waitFor(page, 'applied', (want) => {
    const lines = [...document.querySelectorAll('.monaco-editor .view-lines .view-line')].map((l) => l.textContent.replace(/\u00a0/g, ' '));
    return lines.some((l) => l === want) ? lines : null;
  }, 5_000, spec.acceptedLine);
  await shot(page, 'next-edit-accepted');
  result.second = await until('next one shown', new Function('v', 'return v.struck.length > 0 && v.after.length > 0;'), 10_000);
  await shot(page, 'next-edit-second');
  await page.keyboard.press('Escape');
  result.dismissed = await until('dismissed', new Function('v', 'return v.struck.length === 0 && v.after.length === 0;'), 5_000);
  await sleep(800);
  result.afterDismiss = await view();
  result.linesAfter = await page.evaluate(editorLines);
  await shot(page, 'next-edit-dismissed');
}

let currentPage;

async function main() {
  const browser = await puppeteer.launch({
    executablePath: spec.chromium,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    defaultViewport: { width: 1280, height: 760 },
  });
  try {
    await play(browser);
    // Closing the browser ends the extension host, and with it the server: keep the window
    // open until the server has written what the test reads after (a record in a file).
    if (spec.holdUntilFile) await holdUntil(spec.holdUntilFile, spec.holdUntilText, spec.holdTimeoutMs ?? 60_000);
  } finally {
    await browser.close().catch(() => undefined);
  }
}

/** The spec's scenario (spec.mode), on a new page of `browser`. */
async function play(browser) {
  try {
    const page = await browser.newPage();
    currentPage = page;
    await page.goto(spec.url, { waitUntil: 'domcontentloaded', timeout: 60_000 });
    await waitFor(page, 'workbench', () => !!document.querySelector('.monaco-workbench'), 60_000);
    // From the first moment: what the status bar and notifications show (model-load progress).
    await page.evaluate(installStatusObserver);
    await sleep(1500); // let the workbench settle (extensions activate on startup finished)

    // Quick open (Ctrl+P) the file; on a loaded machine the first try may come too early.
    let opened = false;
    for (let attempt = 0; attempt < 3 && !opened; attempt++) {
      await page.keyboard.down('Control');
      await page.keyboard.press('KeyP');
      await page.keyboard.up('Control');
      await sleep(700);
      await page.keyboard.type(spec.file, { delay: 20 });
      await sleep(1000);
      await page.keyboard.press('Enter');
      opened = await waitFor(page, 'file open', (marker) => {
        const text = [...document.querySelectorAll('.monaco-editor .view-lines .view-line')]
          .map((l) => l.textContent.replace(/\u00a0/g, ' '))
          .join('\n');
        return text.includes(marker);
      }, 20_000, spec.marker).catch(() => false);
      if (!opened) {
        await page.keyboard.press('Escape');
      }
    }
    if (!opened) {
      throw new Error('could not open the file with quick open');
    }
    await page.evaluate(installGhostObserver);

    // Wait until the extension's status item shows the server running.
    await waitFor(page, 'status item', () => {
      const item = [...document.querySelectorAll('.statusbar-item')].find((e) => /\bfast\b/.test(e.textContent || ''));
      return item ? item.textContent : null;
    }, 30_000);
    // Keys typed in the first moments after start-up can come before VS Code has the
    // language client's inline provider (no request for them; the next key asks): the
    // short typing of these modes waits that out.
    if (spec.mode) {
      await sleep(1500);
    }

    if (spec.mode === 'rest') {
      // A jump (Ctrl+End), two quick moves up, then the cursor rests: the extension sends
      // lspAssist/cursorRest once, for the resting place (the test reads the server's log).
      await page.keyboard.down('Control');
      await page.keyboard.press('End');
      await page.keyboard.up('Control');
      await page.keyboard.press('ArrowUp');
      await page.keyboard.press('ArrowUp');
      await sleep(spec.restMs ?? 2000);
      result.restAt = await page.evaluate(() => {
        const sel = document.querySelector('[id="status.editor.selection"]');
        return sel ? sel.textContent.trim() : '';
      });
      return;
    }

    if (spec.mode === 'grow') {
      // The ghost grows while the model streams: record every visible state.
      await page.evaluate(installViewObserver, ghostView.toString());
      await page.keyboard.down('Control');
      await page.keyboard.press('End');
      await page.keyboard.up('Control');
      result.typedAt = await typeLine(page, spec.typed);
      result.grown = await waitFor(page, 'grown ghost', (viewSource, lines, last) => {
        const v = new Function(`return (${viewSource})();`)();
        return v.lines >= lines && v.below.length && v.below[v.below.length - 1].includes(last) ? v : null;
      }, 30_000, ghostView.toString(), spec.lines, spec.lastLine);
      await sleep(300);
      result.views = await page.evaluate(() => window.__views);
      result.ghostLog = await page.evaluate(() => window.__ghost);
      result.linesWithGhost = await page.evaluate(editorLines);
      result.zonesHtml = await page.evaluate(() => (document.querySelector('.view-zones') || {}).outerHTML || '');
      await shot(page, 'grown');
      await page.keyboard.press('Tab');
      result.afterTab = await waitFor(page, 'accepted all', (last) => {
        const lines = [...document.querySelectorAll('.monaco-editor .view-lines .view-line')].map((l) =>
          l.textContent.replace(/\u00a0/g, ' '),
        );
        return lines.some((l) => l.trim() === last.trim()) ? lines : null;
      }, 10_000, spec.lastLine);
      result.shown = await page.evaluate(() => window.__shown);
      return;
    }

    if (spec.mode === 'cycle') {
      // The user asks (Alt+\) while the ghost still grows, then cycles the choices (Alt+] /
      // Alt+[) while suggestionReady keeps arriving: the cycled choice must stay.
      await page.evaluate(installViewObserver, ghostView.toString());
      const view = () => page.evaluate((src) => new Function(`return (${src})();`)(), ghostView.toString());
      const alt = async (key) => {
        await page.keyboard.down('Alt');
        await page.keyboard.press(key);
        await page.keyboard.up('Alt');
      };
      await page.keyboard.down('Control');
      await page.keyboard.press('End');
      await page.keyboard.up('Control');
      await typeLine(page, spec.typed);
      await waitFor(page, 'ghost of two lines', (src) => {
        const v = new Function(`return (${src})();`)();
        return v.lines >= 2 ? v : null;
      }, 30_000, ghostView.toString());
      result.askedAt = await page.evaluate(() => Date.now());
      await alt('Backslash');
      await sleep(spec.answerWaitMs ?? 2500);
      result.invoked = await view();
      await alt('BracketRight');
      await sleep(600);
      result.cycled = await view();
      result.cycledAt = await page.evaluate(() => Date.now());
      await sleep(spec.holdMs ?? 2000);
      result.held = await view();
      await alt('BracketLeft');
      await sleep(600);
      result.back = await view();
      result.views = await page.evaluate(() => window.__views);
      await shot(page, 'cycled');
      return;
    }

    if (spec.mode === 'nextEdit') {
      await nextEdit(page);
      return;
    }

    if (spec.mode === 'events') {
      // Suggestion events: accept one (Tab), type over the next, then edit the accepted line.
      const ghostIs = (want) => waitFor(page, `ghost ${want}`, (w) => {
        const g = [...document.querySelectorAll('[class*="ghost-text-decoration"], .ghost-text')]
          .map((e) => e.textContent.replace(/\u00a0/g, ' ')).join('');
        return g.includes(w) ? g : null;
      }, 20_000, want);
      await page.keyboard.down('Control');
      await page.keyboard.press('End');
      await page.keyboard.up('Control');
      await typeLine(page, spec.typed);
      await ghostIs(spec.ghost);
      await sleep(1200); // on screen past 750 ms: shown
      await page.keyboard.press('Tab');
      await waitFor(page, 'accepted', (want) => [...document.querySelectorAll('.monaco-editor .view-lines .view-line')].map((l) => l.textContent.replace(/\u00a0/g, ' ')).some((l) => l.trim() === want), 10_000, spec.accepted);
      await page.keyboard.press('End');
      await page.keyboard.press('Enter');
      await typeLine(page, spec.typed2);
      await ghostIs(spec.ghost2);
      await sleep(1200);
      await typeLine(page, spec.typeOver); // not what it predicted: typed over
      await sleep(1500);
      await shot(page, 'typed-over');
      // Back on the accepted line: delete its last characters.
      await page.keyboard.press('ArrowUp');
      await page.keyboard.press('End');
      for (let i = 0; i < spec.backspaces; i++) {
        await page.keyboard.press('Backspace');
      }
      await page.keyboard.press('Escape');
      result.afterEdit = await waitFor(page, 'edited', (want) => [...document.querySelectorAll('.monaco-editor .view-lines .view-line')].map((l) => l.textContent.replace(/\u00a0/g, ' ')).some((l) => l.trim() === want), 10_000, spec.edited);
      await shot(page, 'events');
      return;
    }

    if (spec.mode === 'newUser') {
      // No settings but the server path: the embedded model loads (progress), then ghost text.
      await page.keyboard.down('Control');
      await page.keyboard.press('End');
      await page.keyboard.up('Control');
      result.typedAt = await typeLine(page, spec.typed);
      result.ghost = await waitFor(page, 'any ghost', () => {
        const g = [...document.querySelectorAll('[class*="ghost-text-decoration"], .ghost-text')]
          .map((e) => e.textContent.replace(/\u00a0/g, ' ')).join('');
        return g.trim() ? g : null;
      }, spec.ghostTimeoutMs ?? 60_000);
      await shot(page, 'new-user-ghost');
      result.shown = await page.evaluate(() => window.__shown);
      result.ghostAt = await page.evaluate(() => Date.now());
      result.status = await waitFor(page, 'latency', () => {
        const item = [...document.querySelectorAll('.statusbar-item')].find((e) => /fast \d+(\.\d)? ms/.test(e.textContent || ''));
        return item ? item.textContent : null;
      }, 10_000);
      result.statusNow = await page.evaluate(() => [...document.querySelectorAll('.statusbar-item')].map((e) => e.textContent));
      return;
    }

    if (spec.unreachable) {
      // Only the message: type, and wait for the toast naming the endpoint.
      await page.keyboard.down('Control');
      await page.keyboard.press('End');
      await page.keyboard.up('Control');
      const startedAt = await page.evaluate(() => Date.now());
      const typedAt = await typeLine(page, spec.typed);
      const toast = await waitFor(page, 'toast', (needle) => {
        const t = [...document.querySelectorAll('.notifications-toasts .notification-toast')].map((e) => e.textContent).join('\n');
        return t.includes(needle) ? t : null;
      }, 15_000, spec.toastIncludes);
      result.toast = toast;
      const toastAt = await page.evaluate(() => Date.now());
      result.toastAfterTypingMs = toastAt - typedAt;
      result.toastAfterFirstKeyMs = toastAt - startedAt;
      await shot(page, 'unreachable-toast');
      // Keep typing: no second toast (rate-limited).
      await typeLine(page, 'x');
      await sleep(2500);
      result.toasts = await page.evaluate(
        () => [...document.querySelectorAll('.notifications-toasts .notification-toast')].length,
      );
      result.status = await page.evaluate(() =>
        [...document.querySelectorAll('.statusbar-item')].map((e) => e.textContent).filter((t) => /fast/.test(t || '')),
      );
      return;
    }

    // 1. Type at the end of the file: the ghost text appears.
    await page.keyboard.down('Control');
    await page.keyboard.press('End');
    await page.keyboard.up('Control');
    result.typedAt = await typeLine(page, spec.typed);
    await waitFor(page, 'ghost', (want) => {
      const g = [...document.querySelectorAll('[class*="ghost-text-decoration"], .ghost-text')]
        .map((e) => e.textContent.replace(/\u00a0/g, ' ')).join('');
      return g.includes(want) ? g : null;
    }, 20_000, spec.ghost);
    result.ghostLog = await page.evaluate(() => window.__ghost);
    result.linesWithGhost = await page.evaluate(editorLines);
    await shot(page, 'ghost');

    // 2. Tab accepts it.
    await page.keyboard.press('Tab');
    result.afterTab = await waitFor(page, 'accepted', (want) => {
      const lines = [...document.querySelectorAll('.monaco-editor .view-lines .view-line')].map((l) =>
        l.textContent.replace(/\u00a0/g, ' '),
      );
      return lines.some((l) => l.trim() === want) ? lines : null;
    }, 10_000, spec.accepted);
    await sleep(300);
    result.ghostAfterTab = await page.evaluate(ghostText);

    // 3. The status item shows a real latency.
    result.status = await waitFor(page, 'latency', () => {
      const item = [...document.querySelectorAll('.statusbar-item')].find((e) => /fast \d+(\.\d)? ms/.test(e.textContent || ''));
      return item ? item.textContent : null;
    }, 10_000);
    await shot(page, 'accepted');

    // 4. Escalate (Ctrl+Alt+\) on a new line: the quality model's suggestion, accepted with Tab.
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    await typeLine(page, spec.typed2);
    await waitFor(page, 'fast ghost 2', (want) => {
      const g = [...document.querySelectorAll('[class*="ghost-text-decoration"], .ghost-text')]
        .map((e) => e.textContent.replace(/\u00a0/g, ' ')).join('');
      return g.includes(want) ? g : null;
    }, 20_000, spec.ghost2);
    await page.keyboard.down('Control');
    await page.keyboard.down('Alt');
    await page.keyboard.press('Backslash');
    await page.keyboard.up('Alt');
    await page.keyboard.up('Control');
    result.qualityGhost = await waitFor(page, 'quality ghost', (want) => {
      const g = [...document.querySelectorAll('[class*="ghost-text-decoration"], .ghost-text')]
        .map((e) => e.textContent.replace(/\u00a0/g, ' ')).join('');
      return g.includes(want) ? g : null;
    }, 20_000, spec.qualityGhost);
    await shot(page, 'escalated');
    await page.keyboard.press('Tab');
    result.afterEscalate = await waitFor(page, 'quality accepted', (want) => {
      const lines = [...document.querySelectorAll('.monaco-editor .view-lines .view-line')].map((l) =>
        l.textContent.replace(/\u00a0/g, ' '),
      );
      return lines.some((l) => l.trim() === want) ? lines : null;
    }, 10_000, spec.qualityAccepted);
  } catch (error) {
    if (currentPage) {
      result.shown = await currentPage.evaluate(() => window.__shown).catch(() => undefined);
      result.views = await currentPage.evaluate(() => window.__views).catch(() => undefined);
      result.zonesHtml = await currentPage
        .evaluate(() => ((document.querySelector('.view-zones') || {}).outerHTML || '').slice(0, 4000))
        .catch(() => undefined);
      await shot(currentPage, 'failure').catch(() => undefined);
    }
    throw error;
  }
}

main()
  .catch((error) => {
    result.errors.push(String(error && error.stack ? error.stack : error));
  })
  .finally(() => {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  });
