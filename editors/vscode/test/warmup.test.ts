import assert from 'node:assert/strict';
import { test } from 'node:test';

import { formatWarmup } from '../src/warmup';

test('warm-up summary names each endpoint and warns when one cannot be reached', () => {
  const out = formatWarmup({
    files: 12,
    symbols: 80,
    endpoints: { fast: 'ok', quality: 'cannot connect to http://127.0.0.1:9/v1', backup: 'in process' },
    precomputed: 0,
    total_seconds: 0.42,
  });
  assert.equal(out.severity, 'warning');
  assert.match(out.message, /done with problems in 0\.4 s/);
  assert.match(out.message, /quality: cannot connect to http:\/\/127\.0\.0\.1:9\/v1/);
  assert.match(out.message, /12 files indexed \(80 symbols\)/);
});

test('a clean warm-up is info, a failed one an error', () => {
  assert.equal(formatWarmup({ endpoints: { fast: 'ok' }, total_seconds: 1 }).severity, 'info');
  const failed = formatWarmup({ error: 'boom' });
  assert.equal(failed.severity, 'error');
  assert.equal(failed.message, 'lsp-assist: warm-up failed: boom');
});
