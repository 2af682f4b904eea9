/**
 * Tells the server where the cursor rests (`lspAssist/cursorRest`), so that typing after a jump
 * starts warm: when the selection of a file editor stays put for `REST_MS`, the notification
 * carries `{ textDocument: { uri, version }, position }` and the server reads that position's
 * prompt into the embedded model's cache while the model is idle (docs/embedded-latency.md).
 * Nothing for the user to do; a server that does not know the notification ignores it.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';

export const REST_MS = 200;

export class CursorRest implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[];
  private timer: NodeJS.Timeout | undefined;
  private last = ''; // the rest already sent (uri, version, position): not sent again
  sent = 0;

  constructor(private readonly getClient: () => LanguageClient | undefined) {
    this.disposables = [
      vscode.window.onDidChangeTextEditorSelection((e) => this.schedule(e.textEditor)),
      vscode.window.onDidChangeActiveTextEditor((e) => e && this.schedule(e)),
    ];
  }

  private schedule(editor: vscode.TextEditor): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (editor.document.uri.scheme !== 'file') {
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (vscode.window.activeTextEditor === editor) {
        this.send(editor);
      }
    }, REST_MS);
  }

  private send(editor: vscode.TextEditor): void {
    const client = this.getClient();
    if (!client?.isRunning()) {
      return;
    }
    const doc = editor.document;
    const pos = editor.selection.active;
    const key = `${doc.uri.toString()}:${doc.version}:${pos.line}:${pos.character}`;
    if (key === this.last) {
      return;
    }
    this.last = key;
    const params = {
      textDocument: { uri: client.code2ProtocolConverter.asUri(doc.uri), version: doc.version },
      position: client.code2ProtocolConverter.asPosition(pos),
    };
    this.sent += 1;
    void client.sendNotification('lspAssist/cursorRest', params).catch(() => undefined);
  }

  dispose(): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
