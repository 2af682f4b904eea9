import assert from 'node:assert/strict';
import { test } from 'node:test';

import { docKey, GROW_MATCH_MS, GrowPolicy } from '../src/grow';

const at = docKey('file:///a.py', 3, 2);

test('the first growth after an automatic answer only triggers; the re-request gets the prepared answer', () => {
  const policy = new GrowPolicy<string>(() => 0);
  assert.deepEqual(policy.onRequest(at, 'automatic'), { kind: 'automatic' }); // typing
  assert.equal(policy.onReady(at), true);
  assert.equal(policy.prepare(at, 'two lines'), 'trigger');
  assert.deepEqual(policy.onRequest(at, 'invoked'), { kind: 'automatic', prepared: 'two lines' });
  // VS Code now holds an Invoked answer here and would not ask again: the next growth hides first.
  assert.equal(policy.onReady(at), true);
  assert.equal(policy.prepare(at, 'three lines'), 'hideAndTrigger');
  assert.deepEqual(policy.onRequest(at, 'invoked'), { kind: 'automatic', prepared: 'three lines' });
});

test('a prepared answer is used once; the next Invoked request is the user own', () => {
  const policy = new GrowPolicy<string>(() => 0);
  policy.prepare(at, 'grown');
  policy.onRequest(at, 'invoked');
  assert.deepEqual(policy.onRequest(at, 'invoked'), { kind: 'invoked' });
});

test('after the user asked at this version and line, suggestionReady does nothing', () => {
  const policy = new GrowPolicy<string>(() => 0);
  assert.deepEqual(policy.onRequest(at, 'invoked'), { kind: 'invoked' }); // Alt+\ (pending or answered)
  assert.equal(policy.onReady(at), false);
  // Typing (a new version) or another line ends that.
  assert.equal(policy.onReady(docKey('file:///a.py', 4, 2)), true);
});

test('the user asking while the grown text was fetched drops it', () => {
  const policy = new GrowPolicy<string>(() => 0);
  assert.equal(policy.onReady(at), true);
  policy.onRequest(at, 'invoked'); // the user's Alt+\ overtakes it
  assert.equal(policy.prepare(at, 'grown'), 'drop');
});

test('a stale or foreign prepared answer is not used', () => {
  let now = 0;
  const policy = new GrowPolicy<string>(() => now);
  policy.prepare(at, 'grown');
  now = GROW_MATCH_MS + 1;
  assert.deepEqual(policy.onRequest(at, 'invoked'), { kind: 'invoked' });
  const other = new GrowPolicy<string>(() => 0);
  other.prepare(docKey('file:///a.py', 2, 2), 'grown');
  assert.deepEqual(other.onRequest(at, 'invoked'), { kind: 'invoked' });
});

test('the user asking through the extension: growth stops, the choices are prepared and counted', () => {
  const policy = new GrowPolicy<string[]>(() => 0);
  policy.onRequest(at, 'automatic');
  assert.equal(policy.prepare(at, ['two lines']), 'trigger');
  policy.onRequest(at, 'invoked'); // our growth re-request: VS Code now holds an explicit answer
  policy.answered(at, 1);
  policy.asked(at); // Alt+\
  assert.equal(policy.onReady(at), false); // suggestionReady during the wait for the choices
  assert.equal(policy.prepare(at, ['two lines', 'line one'], true), 'hideAndTrigger');
  const decided = policy.onRequest(at, 'invoked');
  assert.deepEqual(decided.prepared, ['two lines', 'line one']);
  policy.answered(at, 2);
  assert.equal(policy.count(at), 2);
  assert.equal(policy.count(docKey('file:///a.py', 4, 2)), 1);
});

test('choices gathered after the user asked are fetched and shown as the user own', () => {
  const policy = new GrowPolicy<string>(() => 0);
  assert.equal(policy.onChoicesReady(at), false); // nobody asked here: nothing to replace
  assert.deepEqual(policy.onRequest(at, 'invoked'), { kind: 'invoked' }); // answered at its first line
  assert.equal(policy.onChoicesReady(at), true);
  assert.equal(policy.prepare(at, 'three choices', true), 'hideAndTrigger');
  assert.deepEqual(policy.onRequest(at, 'invoked'), { kind: 'automatic', prepared: 'three choices' });
  assert.equal(policy.onChoicesReady(docKey('file:///a.py', 4, 2)), false); // typed since
});

test('choices announced after the user cycled never move them off their item', () => {
  const policy = new GrowPolicy<string>(() => 0);
  policy.onRequest(at, 'invoked');
  policy.cycled(at); // Alt+] showed item 2
  assert.equal(policy.onChoicesReady(at), false);
});
