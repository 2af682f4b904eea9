import assert from 'node:assert/strict';
import { test } from 'node:test';

import { statusView } from '../src/status';

test('status item shows the tier and the rounded last latency', () => {
  const [text, tooltip, state] = statusView({ tier: 'fast', provider: 'openai', outcome: 'model', lastLatencyMs: 41.6, state: 'ok' });
  assert.equal(text, '$(sparkle) fast 42 ms');
  assert.equal(state, 'ok');
  assert.match(tooltip, /tier fast \(openai, model\) in 42 ms/);
});

test('status item shows no latency before the first request and the message on a warning', () => {
  assert.equal(statusView({ tier: 'fast', lastLatencyMs: 0 })[0], '$(sparkle) fast');
  assert.equal(statusView({ tier: 'fast', lastLatencyMs: 0.34 })[0], '$(sparkle) fast 0.3 ms');
  assert.equal(statusView({ tier: 'fast', lastLatencyMs: 0.01 })[0], '$(sparkle) fast 0.1 ms');
  const [text, tooltip, state] = statusView({ tier: 'fast', lastLatencyMs: 12, state: 'warning', message: 'cannot connect to http://127.0.0.1:9/v1' });
  assert.equal(text, '$(warning) fast 12 ms');
  assert.equal(state, 'warning');
  assert.equal(tooltip, 'lsp-assist: cannot connect to http://127.0.0.1:9/v1');
});
