import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  editKey,
  endAfterApply,
  itemId,
  look,
  MAX_AFTER_CHARS,
  NextEditItem,
  offScreenText,
  pick,
  Sequencer,
  supported,
  tabAction,
} from '../src/nextEdit';

const URI = 'file:///ws/textwrap.py';

function item(over: Partial<NextEditItem> = {}): NextEditItem {
  return {
    text: 'source',
    textDocument: { uri: URI, version: 7 },
    range: { start: { line: 40, character: 4 }, end: { line: 40, character: 8 } },
    command: { title: 'Accept next edit', command: 'lspAssist.nextEdit.accept', arguments: ['ne-1'] },
    id: 'ne-1',
    ...over,
  };
}

test('supported: only the advertised method counts', () => {
  assert.equal(supported({ experimental: { nextEdit: { method: 'textDocument/copilotInlineEdit', version: 1 } } }), true);
  assert.equal(supported({ experimental: { nextEdit: { method: 'textDocument/other' } } }), false);
  assert.equal(supported({}), false);
  assert.equal(supported(undefined), false);
});

test('pick shows the first alternative for the version asked and still current', () => {
  const second = item({ text: 'other', id: 'ne-2' });
  assert.deepEqual(pick({ edits: [item(), second] }, { uri: URI, version: 7 }, 7, new Set()), item());
});

test('pick drops empty, malformed, stale, foreign and dismissed answers', () => {
  const doc = { uri: URI, version: 7 };
  assert.equal(pick({ edits: [] }, doc, 7, new Set()), undefined);
  assert.equal(pick(null, doc, 7, new Set()), undefined);
  assert.equal(pick({ edits: [{ text: 'x' }] }, doc, 7, new Set()), undefined);
  // Computed for version 6 while the document is at 7.
  assert.equal(pick({ edits: [item({ textDocument: { uri: URI, version: 6 } })] }, doc, 6, new Set()), undefined);
  // The document changed while the request was out.
  assert.equal(pick({ edits: [item()] }, { uri: URI, version: 8 }, 7, new Set()), undefined);
  assert.equal(pick({ edits: [item({ textDocument: { uri: 'file:///other.py', version: 7 } })] }, doc, 7, new Set()), undefined);
  assert.equal(pick({ edits: [item()] }, doc, 7, new Set([editKey(item())])), undefined);
});

test('Tab jumps from another line, accepts on the edit line, never applies a stale edit', () => {
  assert.equal(tabAction(item(), 3, 7), 'jump');
  assert.equal(tabAction(item(), 40, 7), 'accept');
  assert.equal(tabAction(item(), 40, 8), 'stale');
  assert.equal(tabAction(item(), 3, 8), 'stale');
  assert.equal(tabAction(undefined, 40, 7), 'none');
});

test('the cursor ends after the new text', () => {
  assert.deepEqual(endAfterApply(item()), { line: 40, character: 10 });
  assert.deepEqual(endAfterApply(item({ text: 'a\nbcd' })), { line: 41, character: 3 });
});

test('look: struck range, new text after it, lines joined, long text cut', () => {
  const l = look(item());
  assert.deepEqual(l.strike, item().range);
  assert.equal(l.after, 'source');
  assert.deepEqual(l.at, { line: 40, character: 8 });
  const insertion = item({ range: { start: { line: 2, character: 0 }, end: { line: 2, character: 0 } }, text: 'x = 1\ny = 2' });
  assert.equal(look(insertion).strike, undefined);
  assert.equal(look(insertion).after, 'x = 1 ⏎ y = 2');
  const long = look(item({ text: 'y'.repeat(500) })).after;
  assert.equal(long.length, MAX_AFTER_CHARS);
  assert.ok(long.endsWith('…'));
});

test('off-screen status names the line and direction; none while visible', () => {
  assert.equal(offScreenText(item(), [{ start: 30, end: 60 }]), undefined);
  assert.equal(offScreenText(item(), [{ start: 0, end: 20 }]), '$(arrow-down) next edit: line 41 (Tab)');
  assert.equal(offScreenText(item(), [{ start: 50, end: 80 }]), '$(arrow-up) next edit: line 41 (Tab)');
});

test('itemId falls back to the command argument; editKey differs by version', () => {
  assert.equal(itemId(item({ id: undefined })), 'ne-1');
  assert.equal(itemId(item({ id: undefined, command: undefined })), undefined);
  assert.notEqual(editKey(item()), editKey(item({ textDocument: { uri: URI, version: 8 } })));
});

test('Sequencer: a newer request cancels the older one and only the newest reply counts', () => {
  const s = new Sequencer();
  let cancelled = 0;
  const first = s.begin(() => cancelled++);
  const second = s.begin(() => cancelled++);
  assert.equal(cancelled, 1);
  assert.equal(s.finish(first), false);
  assert.equal(s.finish(second), true);
  const third = s.begin(() => cancelled++);
  s.cancel();
  assert.equal(cancelled, 2);
  assert.equal(s.finish(third), false);
});
