/**
 * The lsp-assist VS Code extension: starts `lsp-assist serve` over stdio and wires it into the editor.
 *
 * Inline completions come from vscode-languageclient's built-in inline completion feature
 * (>= 10.0.1). This file adds what the client library does not: server discovery, settings
 * forwarding, the commands, the status bar item, re-triggering on `lspAssist/suggestionReady`,
 * and one-message-only handling of bad states with a backoff restart.
 */
import * as vscode from 'vscode';
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  ExecuteCommandRequest,
  InlineCompletionRequest,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';

import { OnceNotifier, RestartBackoff } from './backoff';
import { CursorRest } from './cursorRest';
import { DefinitionsFeature } from './definitionsFeature';
import { NextEditFeature } from './nextEditFeature';
import { ShownTracker, suggestionId } from './events';
import { CHOICES_WAIT_MS, docKey, GrowPolicy } from './grow';
import { resolveServer, Resolved } from './serverPath';
import { StatusParams, statusView } from './status';
import { formatWarmup, WarmSummary } from './warmup';
import { collectServerConfig, declaredKeys, didChangeParams, JsonObject, SECTION } from './settings';

/** Server -> client notification payloads (the server contract). */
interface SuggestionReadyParams {
  uri: string;
  version?: number;
  position?: { line: number; character: number };
  /** Set when an Invoked answer's other choices are ready (how many items in all). */
  choices?: number;
}
interface EscalateResult {
  text?: string;
  tier?: string;
}

const CLIENT_ID = 'lspAssist';
const CLIENT_NAME = 'lsp-assist';

class Extension implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private resolved: Resolved | undefined;
  private readonly output: vscode.LogOutputChannel;
  private readonly status: vscode.StatusBarItem;
  private readonly backoff = new RestartBackoff();
  private readonly notifier: OnceNotifier;
  private restartTimer: NodeJS.Timeout | undefined;
  private disposed = false;
  private lastStatus: StatusParams = {};
  private readonly toasted = new Set<string>();
  private readonly grow = new GrowPolicy<vscode.InlineCompletionItem[] | vscode.InlineCompletionList>();
  /** Alt+] waiting for the server's choices at a document state (see `cycle`). */
  private readonly choiceWaiters = new Map<string, () => void>();
  private readonly disposables: vscode.Disposable[] = [];
  /** Suggestion events by id (shown after 750 ms not superseded, typed over, dismissed). */
  private readonly shown = new ShownTracker((id, event) => {
    void this.client?.sendNotification('lspAssist/suggestionEvent', { id, event }).catch(() => undefined);
  });

  constructor(private readonly context: vscode.ExtensionContext) {
    this.output = vscode.window.createOutputChannel(CLIENT_NAME, { log: true });
    this.status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
    this.status.command = 'lspAssist.client.showStats';
    this.status.name = CLIENT_NAME;
    this.notifier = new OnceNotifier((key, message) => void this.showError(key, message));
    this.disposables.push(
      this.output,
      this.status,
      vscode.commands.registerCommand('lspAssist.client.escalate', () => this.escalate()),
      vscode.commands.registerCommand('lspAssist.client.warmCache', () => this.warmCache()),
      vscode.commands.registerCommand('lspAssist.client.showStats', () => this.showStats()),
      vscode.commands.registerCommand('lspAssist.client.restart', () => this.restart(true)),
      vscode.commands.registerCommand('lspAssist.client.choices', () => this.askForChoices()),
      vscode.commands.registerCommand('lspAssist.client.nextChoice', () => this.cycle('next')),
      vscode.commands.registerCommand('lspAssist.client.previousChoice', () => this.cycle('previous')),
      vscode.workspace.onDidChangeConfiguration((e) => this.onConfigurationChanged(e)),
      // Definitions the language's own server resolves near the cursor (lspAssist/definitions).
      new DefinitionsFeature(() => this.client),
      // Next-edit suggestions: an edit away from the cursor (textDocument/copilotInlineEdit).
      new NextEditFeature(() => this.client, (line) => this.output.appendLine(line), context.extensionUri),
      // Where the cursor rests, so the server warms the embedded model there (lspAssist/cursorRest).
      new CursorRest(() => this.client),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.contentChanges.length > 0) {
          this.shown.changed(e.document.uri.toString());
        }
      }),
      vscode.workspace.onDidCloseTextDocument((d) => this.shown.closed(d.uri.toString())),
    );
    this.setStatus('$(sync~spin) lsp-assist', 'Starting the lsp-assist server');
    this.status.show();
  }

  /** The server config from the user's explicitly set `lspAssist.*` settings. */
  private serverConfig(): JsonObject {
    const keys = declaredKeys(this.context.extension.packageJSON);
    const cfg = vscode.workspace.getConfiguration(SECTION);
    return collectServerConfig(keys, (key) => cfg.inspect(key));
  }

  private async showError(key: string, message: string): Promise<void> {
    this.output.appendLine(`[error] ${message}`);
    const actions = key === 'missing' ? ['Open Settings', 'Show Output'] : ['Show Output'];
    const choice = await vscode.window.showErrorMessage(message, ...actions);
    if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'lspAssist.server.path');
    } else if (choice === 'Show Output') {
      this.output.show(true);
    }
  }

  private setStatus(text: string, tooltip: string, state: 'ok' | 'warning' | 'error' = 'ok'): void {
    this.status.text = text;
    this.status.tooltip = tooltip;
    this.status.backgroundColor =
      state === 'warning'
        ? new vscode.ThemeColor('statusBarItem.warningBackground')
        : state === 'error'
          ? new vscode.ThemeColor('statusBarItem.errorBackground')
          : undefined;
  }

  private onStatus(params: StatusParams): void {
    this.lastStatus = { ...this.lastStatus, ...params };
    // A warning the server did not already show (window/showMessage is a toast): one toast
    // per distinct message, e.g. the breaker opening or a spent quota.
    if ((params.state === 'warning' || params.state === 'error') && params.message && !params.notified) {
      if (!this.toasted.has(params.message)) {
        this.toasted.add(params.message);
        void vscode.window.showWarningMessage(`lsp-assist: ${params.message}`);
      }
    } else if (params.state === 'ok') {
      this.toasted.clear();
    }
    this.setStatus(...statusView(this.lastStatus));
  }

  /** The ghost grows: fetch the longer suggestion, then make VS Code show it (see grow.ts). */
  private async onSuggestionReady(params: SuggestionReadyParams): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const client = this.client;
    if (!editor || !client) {
      return;
    }
    if (client.code2ProtocolConverter.asUri(editor.document.uri) !== params.uri) {
      return;
    }
    const document = editor.document;
    const version = document.version;
    if (typeof params.version === 'number' && params.version !== version) {
      return; // The user typed since: a fresh request is on its way anyway.
    }
    const position = editor.selection.active;
    if (params.position && params.position.line !== position.line) {
      return;
    }
    const key = docKey(document.uri.toString(), version, position.line);
    if (params.choices) {
      if (this.grow.onChoicesReady(key)) {
        await this.fetchAndShow(client, editor, key, vscode.InlineCompletionTriggerKind.Invoke);
      }
      this.choiceWaiters.get(key)?.();
      return;
    }
    if (!this.grow.onReady(key)) {
      return; // the user's Invoked choices are shown or on their way: keep them
    }
    await this.fetchAndShow(client, editor, key, vscode.InlineCompletionTriggerKind.Automatic);
  }

  /** Ask the server at the cursor, then make VS Code show that answer (see grow.ts). */
  private async fetchAndShow(
    client: LanguageClient,
    editor: vscode.TextEditor,
    key: string,
    triggerKind: vscode.InlineCompletionTriggerKind,
  ): Promise<boolean> {
    const document = editor.document;
    const version = document.version;
    const position = editor.selection.active;
    let answer: vscode.InlineCompletionItem[] | vscode.InlineCompletionList | undefined;
    try {
      const context = { triggerKind, selectedCompletionInfo: undefined };
      const result = await client.sendRequest(
        InlineCompletionRequest.type,
        client.code2ProtocolConverter.asInlineCompletionParams(document, position, context),
      );
      answer = await client.protocol2CodeConverter.asInlineCompletionResult(result);
    } catch (error) {
      this.output.appendLine(`[debug] inline completion: ${String(error)}`);
      return false;
    }
    const now = vscode.window.activeTextEditor;
    if (!answer || now !== editor || document.version !== version || !now.selection.active.isEqual(position)) {
      return false;
    }
    const step = this.grow.prepare(key, answer, triggerKind === vscode.InlineCompletionTriggerKind.Invoke);
    if (step === 'drop') {
      return false;
    }
    if (step === 'hideAndTrigger') {
      // Sent back to back (not awaited): the renderer runs both before VS Code's re-request.
      void vscode.commands.executeCommand('editor.action.inlineSuggest.hide');
    }
    await vscode.commands.executeCommand('editor.action.inlineSuggest.trigger');
    return true;
  }

  /** Alt+\: the server's choices at the cursor (VS Code's own trigger would not ask again
   * while it shows our grown suggestion). */
  private async askForChoices(): Promise<boolean> {
    const editor = vscode.window.activeTextEditor;
    const client = this.client;
    if (!editor || !client?.isRunning()) {
      await vscode.commands.executeCommand('editor.action.inlineSuggest.trigger');
      return false;
    }
    const key = docKey(editor.document.uri.toString(), editor.document.version, editor.selection.active.line);
    this.grow.asked(key);
    return this.fetchAndShow(client, editor, key, vscode.InlineCompletionTriggerKind.Invoke);
  }

  /** Resolves when the choices for `key` were announced and shown, or after `ms`. */
  private waitForChoices(key: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.choiceWaiters.delete(key);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.choiceWaiters.set(key, done);
    });
  }

  /** Alt+] / Alt+[: cycle the choices; with one item shown, ask for the choices first. */
  private async cycle(direction: 'next' | 'previous'): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const command = `editor.action.inlineSuggest.show${direction === 'next' ? 'Next' : 'Previous'}`;
    if (editor) {
      const key = docKey(editor.document.uri.toString(), editor.document.version, editor.selection.active.line);
      if (this.grow.count(key) < 2) {
        // The server answers at the first line and gathers the other choices behind it:
        // wait (briefly) for them to be announced and shown before moving to item 2.
        const ready = this.waitForChoices(key, CHOICES_WAIT_MS);
        if (!(await this.askForChoices())) {
          return;
        }
        if (this.grow.count(key) < 2) {
          await ready;
        }
      }
      await vscode.commands.executeCommand(command);
      this.grow.cycled(key);
      return;
    }
    await vscode.commands.executeCommand(command);
  }

  private buildClient(resolved: Resolved): LanguageClient {
    const args = vscode.workspace.getConfiguration(SECTION).get<string[]>('server.args', ['serve']);
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const executable = { command: resolved.command, args, transport: TransportKind.stdio, options: { cwd } };
    const serverOptions: ServerOptions = { run: executable, debug: executable };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      initializationOptions: () => this.serverConfig(),
      outputChannel: this.output,
      // Bad states get exactly one message from us; the client library must not pop up its own.
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue, handled: true }),
        closed: () => {
          this.scheduleRestartAfterCrash();
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
      middleware: {
        provideInlineCompletionItems: (document, position, context, token, next) => {
          // Our own re-request after suggestionReady gets the grown answer fetched for it.
          const key = docKey(document.uri.toString(), document.version, position.line);
          const invoked = context.triggerKind === vscode.InlineCompletionTriggerKind.Invoke;
          const decided = this.grow.onRequest(key, invoked ? 'invoked' : 'automatic');
          const count = (r: vscode.InlineCompletionItem[] | vscode.InlineCompletionList | null | undefined) => {
            const items = r ? (Array.isArray(r) ? r : r.items) : [];
            this.grow.answered(key, items.length);
            if (!token.isCancellationRequested) {
              this.shown.returned(document.uri.toString(), suggestionId(items[0]));
            }
            return r;
          };
          if (decided.prepared !== undefined) {
            return count(decided.prepared);
          }
          return Promise.resolve(next(document, position, context, token)).then(count);
        },
        executeCommand: (command, args, next) => {
          // VS Code runs an accepted item's command: the server records the accept by its id.
          if (command === 'lspAssist.accepted' && typeof args[0] === 'string') {
            this.shown.accepted(args[0]);
          }
          return next(command, args);
        },
      },
      initializationFailedHandler: (error) => {
        const message = error instanceof Error ? error.message : String(error);
        this.notifier.notify('init', `lsp-assist: the server refused to start (${message}). Check the lspAssist.* settings.`);
        this.setStatus('$(error) lsp-assist', 'The server failed to initialize', 'error');
        return false;
      },
    };
    const client = new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
    client.onNotification('lspAssist/status', (p: StatusParams) => this.onStatus(p));
    client.onNotification('lspAssist/suggestionReady', (p: SuggestionReadyParams) => void this.onSuggestionReady(p));
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) {
        this.backoff.started();
      }
    });
    return client;
  }

  /** Called when the server process went away without us asking. */
  private scheduleRestartAfterCrash(): void {
    if (this.disposed || this.restartTimer) {
      return;
    }
    const delay = this.backoff.crashed();
    if (delay === undefined) {
      this.notifier.notify(
        'crash',
        `lsp-assist: the server crashed ${this.backoff.count} times in a row and will not be restarted. ` +
          'See the output, then run "lsp-assist: Restart server".',
      );
      this.setStatus('$(error) lsp-assist', 'The server crashed; run "lsp-assist: Restart server"', 'error');
      return;
    }
    this.output.appendLine(`[info] server exited; restarting in ${delay} ms (attempt ${this.backoff.count})`);
    this.setStatus('$(sync~spin) lsp-assist', `Server exited; restarting in ${delay} ms`, 'warning');
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      void this.start();
    }, delay);
  }

  async start(): Promise<void> {
    if (this.disposed) {
      return;
    }
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    const configured = vscode.workspace.getConfiguration(SECTION).get<string>('server.path', '');
    this.resolved = resolveServer({ configured, workspaceFolders: folders, envPath: process.env.PATH });
    if (!this.resolved) {
      const where = configured
        ? `lspAssist.server.path is set to "${configured}", which is not an executable file`
        : 'it is neither in the workspace .venv/venv nor on PATH (pip install lsp-assist, or set lspAssist.server.path)';
      this.notifier.notify('missing', `lsp-assist: server not found: ${where}.`);
      this.setStatus('$(error) lsp-assist', 'Server not found', 'error');
      return;
    }
    this.notifier.reset('missing');
    this.output.appendLine(`[info] starting ${this.resolved.command} (from ${this.resolved.source})`);
    if (!this.client) {
      this.client = this.buildClient(this.resolved);
    }
    try {
      await this.client.start();
      // Ready only now: the client turns Running before it registers its features, so a key
      // typed when the item first said so could reach no inline provider (no request, no
      // ghost text until the next key); start() resolves once they are registered.
      this.onStatus({ state: 'ok' });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.output.appendLine(`[error] start failed: ${message}`);
      // A server that dies during initialize also reaches the closed handler, which schedules the retry.
      this.scheduleRestartAfterCrash();
    }
  }

  async restart(manual: boolean): Promise<void> {
    if (this.restartTimer) {
      clearTimeout(this.restartTimer);
      this.restartTimer = undefined;
    }
    if (manual) {
      this.backoff.reset();
      this.notifier.reset();
    }
    const old = this.client;
    this.client = undefined;
    if (old) {
      try {
        if (old.isRunning()) {
          await old.stop(2000);
        }
      } catch (error) {
        this.output.appendLine(`[warn] stopping the old server: ${String(error)}`);
      }
      await old.dispose().catch(() => undefined);
    }
    this.setStatus('$(sync~spin) lsp-assist', 'Restarting the lsp-assist server');
    await this.start();
  }

  private onConfigurationChanged(e: vscode.ConfigurationChangeEvent): void {
    if (!e.affectsConfiguration(SECTION)) {
      return;
    }
    if (e.affectsConfiguration(`${SECTION}.server`)) {
      void this.restart(true);
      return;
    }
    const client = this.client;
    if (client?.isRunning()) {
      void client
        .sendNotification(DidChangeConfigurationNotification.type, didChangeParams(this.serverConfig()))
        .catch((error: unknown) => this.output.appendLine(`[warn] didChangeConfiguration: ${String(error)}`));
    }
  }

  /** The running client, or undefined after telling the user (once) why not. */
  private runningClient(): LanguageClient | undefined {
    if (this.client?.isRunning()) {
      return this.client;
    }
    void vscode.window.showWarningMessage('lsp-assist: the server is not running (see the lsp-assist output).');
    return undefined;
  }

  private async executeServerCommand<T>(command: string, args: unknown[] = []): Promise<T | undefined> {
    const client = this.runningClient();
    if (!client) {
      return undefined;
    }
    try {
      return (await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args })) as T;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.output.appendLine(`[error] ${command}: ${message}`);
      void vscode.window.showErrorMessage(`lsp-assist: ${command} failed: ${message}`);
      return undefined;
    }
  }

  private async escalate(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const client = this.runningClient();
    if (!editor || !client) {
      return;
    }
    const uri = client.code2ProtocolConverter.asUri(editor.document.uri);
    const position = client.code2ProtocolConverter.asPosition(editor.selection.active);
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: 'lsp-assist: asking the quality model' },
      () => this.executeServerCommand<EscalateResult>('lspAssist.escalate', [uri, position]),
    );
    if (!result) {
      return;
    }
    if (!result.text) {
      void vscode.window.setStatusBarMessage('lsp-assist: the quality model had no suggestion', 4000);
      return;
    }
    // The server stored the result for this position: the next inline request returns it.
    if (vscode.window.activeTextEditor === editor) {
      await vscode.commands.executeCommand('editor.action.inlineSuggest.trigger');
    }
  }

  private async warmCache(): Promise<void> {
    // The server reports $/progress (the language client shows it); the result says per tier
    // whether its endpoint answered, so a failed warm-up is reported as one.
    const result = await this.executeServerCommand<WarmSummary>('lspAssist.warmCache');
    if (result === undefined) {
      return;
    }
    const { message, severity } = formatWarmup(result);
    this.output.appendLine(`[${severity}] ${message}`);
    if (severity === 'error') {
      void vscode.window.showErrorMessage(message);
    } else if (severity === 'warning') {
      void vscode.window.showWarningMessage(message);
    } else {
      void vscode.window.showInformationMessage(message);
    }
  }

  private async showStats(): Promise<void> {
    this.output.appendLine(`--- lsp-assist stats (${new Date().toISOString()}) ---`);
    this.output.appendLine(`server: ${this.resolved ? `${this.resolved.command} (${this.resolved.source})` : 'not found'}`);
    this.output.appendLine(`client state: ${this.client ? State[this.client.state] : 'none'}`);
    const result = await this.executeServerCommand<{ report?: string }>('lspAssist.stats');
    if (result?.report) {
      this.output.appendLine(result.report);
    }
    this.output.show(true);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    if (this.restartTimer) {
      clearTimeout(this.restartTimer);
    }
    const client = this.client;
    this.client = undefined;
    if (client) {
      await client.dispose(2000).catch(() => undefined);
    }
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}

let extension: Extension | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extension = new Extension(context);
  await extension.start();
}

export async function deactivate(): Promise<void> {
  const ext = extension;
  extension = undefined;
  await ext?.dispose();
}
