/**
 * Protocol test: drive the REAL `lsp-assist serve` with vscode-languageserver-protocol over node
 * streams (the library vscode-languageclient itself uses), against the loopback fake model server.
 *
 * Checks initialize (capabilities), an inline completion and the escalate command, plus that the
 * extension's settings mirror the server's config schema. Skips with a reason when the project
 * virtualenv or its `lsp-assist` script is missing. Every wait is bounded.
 */
import assert from 'node:assert/strict';
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';

import {
  createProtocolConnection,
  DidOpenTextDocumentNotification,
  ExecuteCommandRequest,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  InitializeResult,
  InlineCompletionItem,
  InlineCompletionList,
  InlineCompletionRequest,
  InlineCompletionTriggerKind,
  ProtocolConnection,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-languageserver-protocol/node';

import { declaredKeys } from '../src/settings';

const REPO = path.resolve(__dirname, '..', '..', '..', '..');
const VENV_BIN = path.join(REPO, '.venv', process.platform === 'win32' ? 'Scripts' : 'bin');
const PYTHON = process.env.LSP_ASSIST_PYTHON ?? path.join(VENV_BIN, 'python');
const SERVER = process.env.LSP_ASSIST_SERVER ?? path.join(VENV_BIN, 'lsp-assist');
const FAKE_TEXT = 'ute_total(prices, rate=0.2)';

function skipReason(): string | undefined {
  if (!fs.existsSync(PYTHON)) {
    return `no project virtualenv python at ${PYTHON}`;
  }
  if (!fs.existsSync(SERVER)) {
    return `no lsp-assist server script at ${SERVER} (pip install -e . in the venv)`;
  }
  return undefined;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Start the fake model server and read `PORT=<n>` from its first stdout line. */
function startFakeModel(): Promise<{ proc: ChildProcess; port: number }> {
  const proc = spawn(
    PYTHON,
    ['-m', 'tests.fakes.fake_model_server', '--port', '0', '--text', FAKE_TEXT, '--exit-on-stdin-eof'],
    { cwd: REPO, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  return withTimeout(
    new Promise((resolve, reject) => {
      let buffered = '';
      proc.stdout?.on('data', (chunk: Buffer) => {
        buffered += chunk.toString('utf8');
        const match = /^PORT=(\d+)/m.exec(buffered);
        if (match) {
          resolve({ proc, port: Number(match[1]) });
        }
      });
      proc.on('exit', (code) => reject(new Error(`fake model server exited with ${code}`)));
    }),
    15_000,
    'fake model server PORT line',
  );
}

function itemsOf(result: InlineCompletionList | InlineCompletionItem[] | null): InlineCompletionItem[] {
  if (!result) {
    return [];
  }
  return Array.isArray(result) ? result : result.items;
}

function textOf(item: InlineCompletionItem): string {
  return typeof item.insertText === 'string' ? item.insertText : item.insertText.value;
}

function killQuietly(proc: ChildProcess | undefined): void {
  if (proc && proc.exitCode === null && proc.signalCode === null) {
    proc.kill('SIGKILL');
  }
}

// CI sets LSP_ASSIST_REQUIRE_SERVER=1 so that a missing server fails instead of skipping.
const reason = skipReason();
if (reason && process.env.LSP_ASSIST_REQUIRE_SERVER === '1') {
  throw new Error(`LSP_ASSIST_REQUIRE_SERVER=1 but ${reason}`);
}

// Each test carries the skip (a skipped describe() alone is reported as "skipped 0").
const skip = reason ? { skip: reason } : {};

describe('lsp-assist server over vscode-languageserver-protocol', { timeout: 120_000 }, () => {
  let fake: ChildProcess | undefined;
  let server: ChildProcess | undefined;
  let connection: ProtocolConnection | undefined;
  let initResult: InitializeResult | undefined;
  let tmp = '';
  const stderr: string[] = [];
  const notifications: Array<{ method: string; params: unknown }> = [];

  const docUri = () => `file://${path.join(tmp, 'ws', 'billing.py')}`;
  const docText = [
    'def compute_total(prices, rate):',
    '    return sum(prices) * (1 + rate)',
    '',
    'total = comp',
  ].join('\n');
  const cursor = { line: 3, character: 'total = comp'.length };

  async function inlineCompletion(): Promise<InlineCompletionItem[]> {
    const conn = connection as ProtocolConnection;
    // The first request may race the model; a few bounded retries keep the test deterministic.
    for (let attempt = 0; attempt < 8; attempt++) {
      const result = await withTimeout(
        conn.sendRequest(InlineCompletionRequest.type, {
          textDocument: { uri: docUri() },
          position: cursor,
          context: { triggerKind: InlineCompletionTriggerKind.Invoked },
        }),
        15_000,
        'textDocument/inlineCompletion',
      );
      const items = itemsOf(result);
      if (items.length > 0) {
        return items;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    return [];
  }

  before(async () => {
    if (reason) {
      return;
    }
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lsp-assist-vscode-'));
    fs.mkdirSync(path.join(tmp, 'ws'));
    fs.writeFileSync(path.join(tmp, 'ws', 'billing.py'), docText);
    const started = await startFakeModel();
    fake = started.proc;
    const baseUrl = `http://127.0.0.1:${started.port}/v1`;
    const tier = { provider: 'openai', api: 'completions', base_url: baseUrl, model: 'fake', fim_template: 'plain' };
    const config = {
      tiers: { fast: { ...tier, max_tokens: 48 }, quality: { ...tier, max_tokens: 160 } },
      cache: { dir: path.join(tmp, 'cache') },
    };

    server = spawn(SERVER, ['serve'], {
      cwd: path.join(tmp, 'ws'),
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, LSP_ASSIST_CACHE_DIR: path.join(tmp, 'cache') },
    });
    server.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
    const conn = createProtocolConnection(
      new StreamMessageReader(server.stdout as NodeJS.ReadableStream),
      new StreamMessageWriter(server.stdin as NodeJS.WritableStream),
    );
    connection = conn;
    // Server -> client requests a real client answers (anything else gets MethodNotFound).
    conn.onRequest('workspace/configuration', (params: { items?: unknown[] }) => (params.items ?? []).map(() => config));
    for (const method of ['window/workDoneProgress/create', 'client/registerCapability', 'client/unregisterCapability']) {
      conn.onRequest(method, () => null);
    }
    for (const method of ['lspAssist/status', 'lspAssist/suggestionReady', '$/progress', 'window/logMessage', 'window/showMessage']) {
      conn.onNotification(method, (params: unknown) => {
        notifications.push({ method, params });
      });
    }
    conn.listen();

    initResult = await withTimeout(
      conn.sendRequest(InitializeRequest.type, {
        processId: process.pid,
        rootUri: `file://${path.join(tmp, 'ws')}`,
        workspaceFolders: [{ uri: `file://${path.join(tmp, 'ws')}`, name: 'ws' }],
        capabilities: {
          general: { positionEncodings: ['utf-16'] },
          window: { workDoneProgress: true },
          workspace: { configuration: true, didChangeConfiguration: { dynamicRegistration: false } },
          textDocument: {
            synchronization: { dynamicRegistration: false },
            inlineCompletion: { dynamicRegistration: false },
          },
        },
        initializationOptions: config,
      }),
      30_000,
      'initialize',
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}; server stderr:\n${stderr.join('').slice(-3000)}`);
    });
    await conn.sendNotification(InitializedNotification.type, {});
    await conn.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri: docUri(), languageId: 'python', version: 1, text: docText },
    });
  });

  after(async () => {
    const conn = connection;
    if (conn && server?.exitCode === null) {
      try {
        await withTimeout(conn.sendRequest(ShutdownRequest.type), 5000, 'shutdown');
        await conn.sendNotification(ExitNotification.type);
      } catch {
        // Killed below anyway.
      }
    }
    if (server && server.exitCode === null) {
      await withTimeout(new Promise((r) => server?.once('exit', r)), 5000, 'server exit').catch(() => undefined);
    }
    conn?.dispose();
    killQuietly(server);
    fake?.stdin?.end();
    killQuietly(fake);
    if (tmp) {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  test('initialize advertises inline completion and the lspAssist commands', skip, () => {
    const caps = (initResult as InitializeResult).capabilities;
    assert.ok(caps.inlineCompletionProvider, 'inlineCompletionProvider missing from capabilities');
    const commands = caps.executeCommandProvider?.commands ?? [];
    for (const command of ['lspAssist.escalate', 'lspAssist.warmCache', 'lspAssist.stats']) {
      assert.ok(commands.includes(command), `${command} not in ${JSON.stringify(commands)}`);
    }
  });

  test('textDocument/inlineCompletion returns the model text over the typed prefix', skip, async () => {
    const items = await inlineCompletion();
    assert.ok(items.length > 0, `no inline completion items; server stderr:\n${stderr.join('').slice(-2000)}`);
    const item = items[0];
    const text = textOf(item);
    if (process.env.LSP_ASSIST_TEST_VERBOSE) {
      console.log('inline item:', JSON.stringify(item));
    }
    const range = item.range ?? { start: cursor, end: cursor };
    assert.equal(range.start.line, cursor.line);
    assert.equal(range.end.line, cursor.line);
    // insertText covers range.start .. suggestion end: typed text + the model's continuation.
    const typed = 'total = comp'.slice(range.start.character, cursor.character);
    assert.ok(text.startsWith(typed), `${JSON.stringify(text)} does not start with ${JSON.stringify(typed)}`);
    assert.ok(
      (typed + FAKE_TEXT).startsWith(text) || text.startsWith(typed + FAKE_TEXT),
      `${JSON.stringify(text)} is not the fake model's continuation ${JSON.stringify(typed + FAKE_TEXT)}`,
    );
    assert.ok(text.length > typed.length, 'the suggestion adds nothing');
  });

  test('lspAssist.escalate returns quality text that the next inline completion serves', skip, async () => {
    const conn = connection as ProtocolConnection;
    const result = (await withTimeout(
      conn.sendRequest(ExecuteCommandRequest.type, {
        command: 'lspAssist.escalate',
        arguments: [docUri(), cursor],
      }),
      30_000,
      'lspAssist.escalate',
    )) as { text?: string; tier?: string } | null;
    assert.ok(result, 'escalate returned null');
    assert.equal(result.tier, 'quality');
    assert.ok(result.text && result.text.length > 0, `escalate returned no text: ${JSON.stringify(result)}`);
    const items = await inlineCompletion();
    assert.ok(items.length > 0, 'no inline completion after escalate');
    assert.ok(
      textOf(items[0]).endsWith(result.text) || textOf(items[0]).includes(result.text),
      `inline item ${JSON.stringify(textOf(items[0]))} does not carry the escalated ${JSON.stringify(result.text)}`,
    );
  });

  test('lspAssist/status carries the last request tier and a real latency', skip, async () => {
    await inlineCompletion();
    const deadline = Date.now() + 5000;
    const latest = () =>
      notifications
        .filter((n) => n.method === 'lspAssist/status')
        .map((n) => n.params as { tier?: string; lastLatencyMs?: number; outcome?: string })
        .filter((p) => typeof p.outcome === 'string');
    while (latest().length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const last = latest().at(-1);
    assert.ok(last, 'no lspAssist/status after a request');
    assert.equal(last.tier, 'fast');
    assert.ok((last.lastLatencyMs ?? 0) > 0, `latency ${String(last.lastLatencyMs)}`);
  });

  test('server log lines arrive as window/logMessage with their level, not on stderr', skip, async () => {
    // The workspace index logs an INFO line shortly after initialized.
    const deadline = Date.now() + 15_000;
    const infos = () =>
      notifications.filter((n) => n.method === 'window/logMessage' && (n.params as { type?: number }).type === 3);
    while (infos().length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(infos().length > 0, `no Info logMessage; got ${JSON.stringify(notifications.map((n) => n.method))}`);
    const stderrText = stderr.join('');
    assert.ok(!/ INFO /.test(stderrText), `INFO lines on stderr (editors show them as errors):\n${stderrText.slice(-2000)}`);
  });

  test('the extension settings mirror the server config schema', skip, () => {
    const dump = spawnSync(
      PYTHON,
      [
        '-c',
        'import dataclasses, json; from lsp_assist.config.schema import Config; ' +
          'print(json.dumps(dataclasses.asdict(Config())))',
      ],
      { cwd: REPO, encoding: 'utf8', timeout: 30_000 },
    );
    assert.equal(dump.status, 0, dump.stderr);
    const schema = JSON.parse(dump.stdout) as Record<string, unknown>;
    const flat: string[] = [];
    const walk = (prefix: string, value: unknown, depth: number) => {
      // tiers.<name>.<key> and section.<key> are leaves; dict-typed fields (budget.*, governance) stay whole.
      const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
      const descend = isObject && (prefix === '' || prefix === 'tiers' || prefix.startsWith('tiers.') || depth === 1);
      if (descend && prefix !== 'governance' && !prefix.startsWith('budget.')) {
        for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
          walk(prefix ? `${prefix}.${k}` : k, v, depth + 1);
        }
      } else {
        flat.push(prefix);
      }
    };
    walk('', schema, 0);
    const declared = new Set(declaredKeys(JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'))));
    const missing = flat.filter((k) => !declared.has(k));
    assert.deepEqual(missing, [], `schema keys without an lspAssist.* setting: ${missing.join(', ')}`);
  });
});
