/** Unit tests: finding the `lsp-assist` executable. */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

import { expandPath, resolveServer } from '../src/serverPath';

function makeExe(file: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, '#!/bin/sh\n');
  fs.chmodSync(file, 0o755);
  return file;
}

test('setting, then workspace venv, then PATH', { skip: process.platform === 'win32' }, () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'lsp-assist-path-'));
  try {
    const ws = path.join(root, 'ws');
    const binDir = path.join(root, 'bin');
    const onPath = makeExe(path.join(binDir, 'lsp-assist'));
    fs.mkdirSync(ws, { recursive: true });
    assert.deepEqual(resolveServer({ configured: '', workspaceFolders: [ws], envPath: binDir }), {
      command: onPath,
      source: 'PATH',
    });
    const inVenv = makeExe(path.join(ws, 'venv', 'bin', 'lsp-assist'));
    assert.deepEqual(resolveServer({ configured: '', workspaceFolders: [ws], envPath: binDir }), {
      command: inVenv,
      source: 'venv',
    });
    const inDotVenv = makeExe(path.join(ws, '.venv', 'bin', 'lsp-assist'));
    assert.equal(resolveServer({ configured: '', workspaceFolders: [ws], envPath: binDir })?.command, inDotVenv);
    const custom = makeExe(path.join(root, 'custom', 'srv'));
    assert.deepEqual(resolveServer({ configured: custom, workspaceFolders: [ws], envPath: binDir }), {
      command: custom,
      source: 'setting',
    });
    // ${workspaceFolder} expansion
    assert.equal(
      resolveServer({ configured: '${workspaceFolder}/.venv/bin/lsp-assist', workspaceFolders: [ws], envPath: '' })
        ?.command,
      inDotVenv,
    );
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a wrong setting or nothing installed resolves to undefined', { skip: process.platform === 'win32' }, () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'lsp-assist-path-'));
  try {
    assert.equal(resolveServer({ configured: path.join(root, 'nope'), workspaceFolders: [root], envPath: '' }), undefined);
    assert.equal(resolveServer({ configured: '', workspaceFolders: [root], envPath: root }), undefined);
    const notExecutable = path.join(root, 'lsp-assist');
    fs.writeFileSync(notExecutable, '');
    fs.chmodSync(notExecutable, 0o644);
    assert.equal(resolveServer({ configured: '', workspaceFolders: [], envPath: root }), undefined);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('expandPath handles ~ and relative paths', () => {
  assert.equal(expandPath('~/x/lsp-assist', []), path.join(os.homedir(), 'x/lsp-assist'));
  assert.equal(expandPath('.venv/bin/lsp-assist', ['/ws']), path.resolve('/ws', '.venv/bin/lsp-assist'));
  assert.equal(expandPath('lsp-assist', ['/ws']), 'lsp-assist');
});
