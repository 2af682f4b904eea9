/** Unit tests: flat `lspAssist.*` settings -> the server's nested config dict. */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import {
  collectServerConfig,
  declaredKeys,
  didChangeParams,
  explicitValue,
  isServerKey,
  nestSettings,
} from '../src/settings';

const packageJson: unknown = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));

test('nests dotted keys into the server config shape', () => {
  const nested = nestSettings({
    'tiers.fast.provider': 'openai',
    'tiers.fast.base_url': 'http://127.0.0.1:8080/v1',
    'tiers.fast.max_tokens': 48,
    'tiers.quality.model': 'big',
    'cache.dir': '/tmp/c',
    log_level: 'debug',
  });
  assert.deepEqual(nested, {
    tiers: {
      fast: { provider: 'openai', base_url: 'http://127.0.0.1:8080/v1', max_tokens: 48 },
      quality: { model: 'big' },
    },
    cache: { dir: '/tmp/c' },
    log_level: 'debug',
  });
});

test('drops client-only keys, undefined values and a leading section name', () => {
  const nested = nestSettings({
    'server.path': '/x/lsp-assist',
    'server.args': ['serve'],
    'trace.server': 'verbose',
    'lspAssist.completion.deadline_ms': 500,
    'tiers.fast.model': undefined,
  });
  assert.deepEqual(nested, { completion: { deadline_ms: 500 } });
  assert.equal(isServerKey('server.path'), false);
  assert.equal(isServerKey('tiers.fast.provider'), true);
});

test('object-valued settings merge with dotted keys below them, in any order', () => {
  const a = nestSettings({ 'governance.audit.enabled': true, governance: { quota: { daily_tokens: 10 } } });
  const b = nestSettings({ governance: { quota: { daily_tokens: 10 } }, 'governance.audit.enabled': true });
  const expected = { governance: { quota: { daily_tokens: 10 }, audit: { enabled: true } } };
  assert.deepEqual(a, expected);
  assert.deepEqual(b, expected);
});

test('arrays and falsy values are forwarded as set', () => {
  const nested = nestSettings({
    'completion.languages_disabled': ['markdown'],
    'completion.prefetch': false,
    'local.threads': 0,
    'cache.dir': '',
  });
  assert.deepEqual(nested, {
    completion: { languages_disabled: ['markdown'], prefetch: false },
    local: { threads: 0 },
    cache: { dir: '' },
  });
});

test('explicitValue: the most specific scope wins; unset is undefined', () => {
  assert.equal(explicitValue(undefined), undefined);
  assert.equal(explicitValue({}), undefined);
  assert.equal(explicitValue({ globalValue: 'g' }), 'g');
  assert.equal(explicitValue({ globalValue: 'g', workspaceValue: 'w' }), 'w');
  assert.equal(explicitValue({ globalValue: 'g', workspaceValue: 'w', workspaceFolderValue: 'f' }), 'f');
  assert.equal(explicitValue({ globalValue: true, workspaceValue: false }), false);
});

test('collectServerConfig forwards only explicitly set server keys from package.json', () => {
  const keys = declaredKeys(packageJson);
  assert.ok(keys.includes('tiers.fast.provider'));
  assert.ok(keys.includes('server.path'));
  const set: Record<string, unknown> = {
    'tiers.fast.provider': 'openai',
    'tiers.fast.base_url': 'http://127.0.0.1:9/v1',
    'server.path': '/opt/lsp-assist',
  };
  const config = collectServerConfig(keys, (key) => (key in set ? { globalValue: set[key] } : {}));
  assert.deepEqual(config, { tiers: { fast: { provider: 'openai', base_url: 'http://127.0.0.1:9/v1' } } });
  assert.deepEqual(didChangeParams(config), { settings: { lspAssist: config } });
});

test('package.json declares every tier key for all three tiers', () => {
  const keys = new Set(declaredKeys(packageJson));
  const tierKeys = [...keys].filter((k) => k.startsWith('tiers.fast.')).map((k) => k.slice('tiers.fast.'.length));
  assert.ok(tierKeys.length >= 10, `only ${tierKeys.length} tier keys`);
  for (const tier of ['quality', 'backup']) {
    for (const k of tierKeys) {
      assert.ok(keys.has(`tiers.${tier}.${k}`), `missing tiers.${tier}.${k}`);
    }
  }
});
