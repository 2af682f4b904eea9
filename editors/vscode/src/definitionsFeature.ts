/**
 * Binds `DefinitionsCollector` (definitions.ts) to VS Code: when the cursor rests for `IDLE_MS`
 * in a file editor, the names around it are resolved with `vscode.executeDefinitionProvider`
 * (every definition provider of the language: Pylance, gopls, tsserver...) and the definitions'
 * first lines go to the server as `lspAssist/definitions`. Off with
 * `lspAssist.editorDefinitions.enabled = false`. Nothing here is on the inline-completion path.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';

import { DefinitionsCollector, DefinitionsHost, DefinitionsParams, Target } from './definitions';

export const IDLE_MS = 250;
const WINDOW_ABOVE = 60; // rows around the cursor handed to the collector
const WINDOW_BELOW = 8;
const MAX_FILE_BYTES = 2_000_000; // a definition in a bigger file that is not open is skipped

function toTarget(loc: vscode.Location | vscode.LocationLink): Target {
  if ('targetUri' in loc) {
    return { uri: loc.targetUri.toString(), range: rangeOf(loc.targetRange) };
  }
  return { uri: loc.uri.toString(), range: rangeOf(loc.range) };
}

function rangeOf(r: vscode.Range): Target['range'] {
  return {
    start: { line: r.start.line, character: r.start.character },
    end: { line: r.end.line, character: r.end.character },
  };
}

function host(getClient: () => LanguageClient | undefined): DefinitionsHost {
  return {
    async definitions(uri, pos) {
      const found = await vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[] | undefined>(
        'vscode.executeDefinitionProvider',
        vscode.Uri.parse(uri),
        new vscode.Position(pos.line, pos.character),
      );
      return (found ?? []).map(toTarget);
    },
    async readLines(uri, start, count) {
      const target = vscode.Uri.parse(uri);
      // An open buffer's text (unsaved edits included); else the file, read without opening a
      // document (opening one would announce it to every language server, lsp-assist included).
      const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === target.toString());
      if (open) {
        const out: string[] = [];
        for (let i = start; i < Math.min(open.lineCount, start + count); i++) {
          out.push(open.lineAt(i).text);
        }
        return out;
      }
      if (target.scheme !== 'file') {
        return undefined;
      }
      const stat = await vscode.workspace.fs.stat(target);
      if (stat.size > MAX_FILE_BYTES) {
        return undefined;
      }
      const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(target));
      return text.split(/\r?\n/).slice(start, start + count);
    },
    send(params: DefinitionsParams) {
      const client = getClient();
      if (client?.isRunning()) {
        void client.sendNotification('lspAssist/definitions', params).catch(() => undefined);
      }
    },
  };
}

export class DefinitionsFeature implements vscode.Disposable {
  private readonly collector: DefinitionsCollector;
  private readonly disposables: vscode.Disposable[];
  private timer: NodeJS.Timeout | undefined;

  constructor(getClient: () => LanguageClient | undefined) {
    this.collector = new DefinitionsCollector(host(getClient));
    this.disposables = [
      vscode.window.onDidChangeTextEditorSelection((e) => this.schedule(e.textEditor)),
      vscode.workspace.onDidCloseTextDocument((d) => this.collector.forget(d.uri.toString())),
    ];
  }

  private enabled(): boolean {
    return vscode.workspace.getConfiguration('lspAssist').get<boolean>('editorDefinitions.enabled', true);
  }

  private schedule(editor: vscode.TextEditor): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (editor.document.uri.scheme !== 'file' || !this.enabled()) {
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (vscode.window.activeTextEditor !== editor) {
        return;
      }
      const doc = editor.document;
      const cursor = editor.selection.active;
      const first = Math.max(0, cursor.line - WINDOW_ABOVE);
      const last = Math.min(doc.lineCount - 1, cursor.line + WINDOW_BELOW);
      const lines: string[] = [];
      for (let i = first; i <= last; i++) {
        lines.push(doc.lineAt(i).text);
      }
      void this.collector.run({
        uri: doc.uri.toString(),
        version: doc.version,
        lines,
        firstLine: first,
        cursor: { line: cursor.line, character: cursor.character },
      });
    }, IDLE_MS);
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
