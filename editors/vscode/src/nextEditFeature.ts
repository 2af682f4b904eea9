/**
 * Next-edit suggestions in VS Code (stable API only): after a change (debounced) or a cursor
 * move, asks the server with `textDocument/copilotInlineEdit` and shows the first edit in place
 * with decorations (the replaced text struck through, the new text after it, a gutter arrow and
 * an overview-ruler mark), plus a status bar item while it is off screen. The context key
 * `lspAssist.nextEditVisible` enables the Tab (jump, then accept) and Escape (dismiss)
 * keybindings of package.json, so both keys keep their usual meaning otherwise. Accepting
 * applies the edit only to the document version it was computed for, then sends
 * the item's command; dismissing sends `lspAssist.nextEdit.reject`. Typing clears it.
 */
import * as vscode from 'vscode';
import { ExecuteCommandRequest, type LanguageClient } from 'vscode-languageclient/node';

import {
  CONTEXT_KEY,
  DID_SHOW,
  editKey,
  endAfterApply,
  itemId,
  look,
  METHOD,
  NextEditItem,
  NextEditParams,
  offScreenText,
  pick,
  REJECT_COMMAND,
  Sequencer,
  supported,
  tabAction,
} from './nextEdit';

const SETTING = 'lspAssist.editorNextEdit';
const MAX_REJECTED = 200;

interface Shown {
  item: NextEditItem;
  editor: vscode.TextEditor;
}

export class NextEditFeature implements vscode.Disposable {
  private readonly strike: vscode.TextEditorDecorationType;
  private readonly added: vscode.TextEditorDecorationType;
  private readonly status: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly seq = new Sequencer();
  private readonly rejected = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private shown: Shown | undefined;

  constructor(
    private readonly getClient: () => LanguageClient | undefined,
    private readonly log: (line: string) => void,
    extensionUri: vscode.Uri,
  ) {
    this.strike = vscode.window.createTextEditorDecorationType({
      textDecoration: 'line-through',
      color: new vscode.ThemeColor('editorError.foreground'),
      backgroundColor: new vscode.ThemeColor('diffEditor.removedTextBackground'),
      gutterIconPath: vscode.Uri.joinPath(extensionUri, 'media', 'next-edit.svg'),
      gutterIconSize: 'contain',
      overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.addedForeground'),
      overviewRulerLane: vscode.OverviewRulerLane.Right,
    });
    this.added = vscode.window.createTextEditorDecorationType({});
    this.status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 99);
    this.status.name = 'lsp-assist next edit';
    this.status.command = 'lspAssist.client.nextEdit.jumpOrAccept';
    this.disposables.push(
      this.strike,
      this.added,
      this.status,
      vscode.commands.registerCommand('lspAssist.client.nextEdit.jumpOrAccept', () => this.jumpOrAccept()),
      vscode.commands.registerCommand('lspAssist.client.nextEdit.dismiss', () => this.dismiss()),
      vscode.workspace.onDidChangeTextDocument((e) => this.onChange(e)),
      vscode.window.onDidChangeTextEditorSelection((e) => this.onSelection(e)),
      vscode.window.onDidChangeTextEditorVisibleRanges((e) => {
        if (e.textEditor === this.shown?.editor) {
          this.updateStatus();
        }
      }),
      vscode.window.onDidChangeActiveTextEditor(() => this.clear()),
    );
  }

  private enabled(): boolean {
    return vscode.workspace.getConfiguration(SETTING).get<boolean>('enabled', true);
  }

  private onChange(e: vscode.TextDocumentChangeEvent): void {
    const editor = vscode.window.activeTextEditor;
    if (e.contentChanges.length === 0 || editor?.document !== e.document) {
      return;
    }
    this.clear(); // the document moved on: what is shown no longer applies
    this.schedule(editor);
  }

  private onSelection(e: vscode.TextEditorSelectionChangeEvent): void {
    if (e.textEditor !== vscode.window.activeTextEditor) {
      return;
    }
    if (this.shown) {
      this.updateStatus(); // keep it while the user goes to it
    } else if (e.kind !== undefined) {
      this.schedule(e.textEditor); // a cursor move by the user: ask at the new position
    }
  }

  private schedule(editor: vscode.TextEditor): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.seq.cancel();
    if (!this.enabled()) {
      return;
    }
    const delay = vscode.workspace.getConfiguration(SETTING).get<number>('debounceMs', 30);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.request(editor);
    }, delay);
  }

  private async request(editor: vscode.TextEditor): Promise<void> {
    const client = this.getClient();
    if (!client?.isRunning() || !supported(client.initializeResult?.capabilities)) {
      return;
    }
    const doc = editor.document;
    const version = doc.version;
    const pos = editor.selection.active;
    const params: NextEditParams = {
      textDocument: { uri: doc.uri.toString(), version },
      position: { line: pos.line, character: pos.character },
    };
    const source = new vscode.CancellationTokenSource();
    const ticket = this.seq.begin(() => source.cancel()); // a cancelled token sends $/cancelRequest
    let result: unknown;
    try {
      result = await client.sendRequest(METHOD, params, source.token);
    } catch {
      return; // cancelled, or the server went away
    } finally {
      source.dispose();
    }
    if (!this.seq.finish(ticket) || vscode.window.activeTextEditor !== editor) {
      return;
    }
    const item = pick(result, { uri: doc.uri.toString(), version: doc.version }, version, this.rejected);
    if (item) {
      this.show(editor, item);
      void client.sendNotification(DID_SHOW, { item }).catch(() => undefined);
    }
  }

  private show(editor: vscode.TextEditor, item: NextEditItem): void {
    const l = look(item);
    const at = new vscode.Position(l.at.line, l.at.character);
    const r = item.range;
    const range = new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
    // The strike type also carries the gutter arrow: an insertion gets it on an empty range.
    editor.setDecorations(this.strike, [l.strike ? range : new vscode.Range(at, at)]);
    editor.setDecorations(this.added, [
      {
        range: new vscode.Range(at, at),
        renderOptions: {
          after: {
            contentText: l.after,
            color: new vscode.ThemeColor('editorGutter.addedBackground'),
            backgroundColor: new vscode.ThemeColor('diffEditor.insertedTextBackground'),
            margin: '0 0 0 0.3em',
          },
        },
        hoverMessage: new vscode.MarkdownString('Next edit: **Tab** jumps to it, **Tab** again applies it, **Esc** dismisses it'),
      },
    ]);
    this.shown = { item, editor };
    void vscode.commands.executeCommand('setContext', CONTEXT_KEY, true);
    this.updateStatus();
  }

  private updateStatus(): void {
    const shown = this.shown;
    const text = shown
      ? offScreenText(
          shown.item,
          shown.editor.visibleRanges.map((v) => ({ start: v.start.line, end: v.end.line })),
        )
      : undefined;
    if (text) {
      this.status.text = text;
      this.status.tooltip = 'lsp-assist: a next edit is waiting there; Tab jumps to it, Esc dismisses it';
      this.status.show();
    } else {
      this.status.hide();
    }
  }

  /** Remove what is drawn (no message to the server: typing over is not a rejection). */
  clear(): void {
    if (this.shown) {
      this.shown.editor.setDecorations(this.strike, []);
      this.shown.editor.setDecorations(this.added, []);
      this.shown = undefined;
      void vscode.commands.executeCommand('setContext', CONTEXT_KEY, false);
    }
    this.status.hide();
  }

  async jumpOrAccept(): Promise<void> {
    const shown = this.shown;
    const editor = shown?.editor;
    if (!shown || !editor || vscode.window.activeTextEditor !== editor) {
      return;
    }
    const action = tabAction(shown.item, editor.selection.active.line, editor.document.version);
    const r = shown.item.range;
    if (action === 'jump') {
      const start = new vscode.Position(r.start.line, r.start.character);
      editor.selection = new vscode.Selection(start, start);
      editor.revealRange(new vscode.Range(start, start), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
      this.updateStatus();
    } else if (action === 'stale') {
      this.clear(); // never applied to another version than it was computed for
    } else if (action === 'accept') {
      await this.accept(editor, shown.item);
    }
  }

  private async accept(editor: vscode.TextEditor, item: NextEditItem): Promise<void> {
    const r = item.range;
    const range = new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
    this.clear();
    // TextEditor.edit, not workspace.applyEdit: the latter reduces the replacement to a
    // "more minimal" diff (text -> source arrives as two partial changes, measured in
    // code-server 1.100), while this sends range -> text as one change. It also refuses by
    // itself when the document's version moved since (the main thread compares versions).
    if (editor.document.version !== item.textDocument.version) {
      return;
    }
    const applied = await editor.edit((b) => b.replace(range, item.text), { undoStopBefore: true, undoStopAfter: true });
    if (!applied) {
      return;
    }
    const end = endAfterApply(item);
    const pos = new vscode.Position(end.line, end.character);
    editor.selection = new vscode.Selection(pos, pos);
    if (item.command) {
      await this.execute(item.command.command, item.command.arguments ?? []);
    }
  }

  async dismiss(): Promise<void> {
    const shown = this.shown;
    this.seq.cancel();
    this.clear();
    if (!shown) {
      return;
    }
    if (this.rejected.size > MAX_REJECTED) {
      this.rejected.clear();
    }
    this.rejected.add(editKey(shown.item));
    await this.execute(REJECT_COMMAND, [itemId(shown.item)]);
  }

  private async execute(command: string, args: unknown[]): Promise<void> {
    const client = this.getClient();
    if (!client?.isRunning()) {
      return;
    }
    try {
      await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
      this.log(`[info] next edit: ${command} ${String(args[0])}`); // the id only, never text
    } catch (error) {
      this.log(`[warn] ${command}: ${String(error)}`);
    }
  }

  dispose(): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.seq.cancel();
    this.clear();
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
