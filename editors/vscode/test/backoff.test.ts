/** Unit tests: restart backoff and the one-message notifier. */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { OnceNotifier, RestartBackoff } from '../src/backoff';

test('backoff doubles, caps, then gives up', () => {
  let now = 0;
  const b = new RestartBackoff({ baseDelayMs: 100, maxDelayMs: 300, maxRestarts: 4, stableAfterMs: 10_000 }, () => now);
  const delays: Array<number | undefined> = [];
  for (let i = 0; i < 5; i++) {
    b.started();
    now += 10;
    delays.push(b.crashed());
  }
  assert.deepEqual(delays, [100, 200, 300, 300, undefined]);
});

test('a server that stayed up long enough resets the crash count', () => {
  let now = 0;
  const b = new RestartBackoff({ baseDelayMs: 100, maxDelayMs: 10_000, maxRestarts: 3, stableAfterMs: 1000 }, () => now);
  b.started();
  assert.equal(b.crashed(), 100);
  b.started();
  assert.equal(b.crashed(), 200);
  b.started();
  now += 5000;
  assert.equal(b.crashed(), 100);
  b.reset();
  assert.equal(b.count, 0);
});

test('OnceNotifier shows a message once per key until reset', () => {
  const shown: string[] = [];
  const n = new OnceNotifier((key) => shown.push(key));
  assert.equal(n.notify('missing', 'a'), true);
  assert.equal(n.notify('missing', 'a'), false);
  assert.equal(n.notify('crash', 'b'), true);
  n.reset('missing');
  assert.equal(n.notify('missing', 'a'), true);
  assert.deepEqual(shown, ['missing', 'crash', 'missing']);
});
