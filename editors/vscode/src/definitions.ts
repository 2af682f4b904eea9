/**
 * Editor-provided definitions: ask the language's own server (Pylance/pyright, gopls, tsserver...)
 * where a few names around the cursor are defined, read the first lines there, and send them to
 * lsp-assist with the `lspAssist/definitions` notification (see the README, "Definitions from the
 * editor's language server"). The server ranks them with its own cross-file context.
 *
 * Pure code (no `vscode` import) so that it is unit-tested under plain node: the editor is reached
 * through `DefinitionsHost`, which extension.ts implements with `vscode.executeDefinitionProvider`.
 * Runs when typing pauses, never on the inline-completion request's path: at most `maxNames` names
 * per run, all asked at once, and whatever has not answered after `budgetMs` is dropped.
 */

export interface Position {
  line: number;
  character: number;
}
export interface Range {
  start: Position;
  end: Position;
}

/** One place a name is defined, as the definition provider reported it. */
export interface Target {
  uri: string;
  range: Range; // the declaration's range (LocationLink.targetRange) or the name's (Location.range)
}

export interface DefinitionEntry {
  name: string;
  uri: string;
  range: Range;
  text: string;
}

export interface DefinitionsParams {
  uri: string;
  version: number;
  definitions: DefinitionEntry[];
}

/** What the collector needs from the editor (extension.ts binds it to the VS Code API). */
export interface DefinitionsHost {
  /** Definition targets of the symbol at `pos` in document `uri` (the language servers' answer). */
  definitions(uri: string, pos: Position): Promise<Target[]>;
  /** Lines `start`..`start + count` of a document (an open buffer's text, else the file's), or undefined. */
  readLines(uri: string, start: number, count: number): Promise<string[] | undefined>;
  send(params: DefinitionsParams): void;
}

/** The document at the moment typing paused: `lines` are rows `firstLine`.. of it (a window
 * around the cursor is enough), `cursor` is in document coordinates. */
export interface Snapshot {
  uri: string;
  version: number;
  lines: string[];
  firstLine?: number;
  cursor: Position;
}

export const MAX_NAMES = 8;
export const BUDGET_MS = 150;
export const MAX_TEXT_LINES = 8;
export const MAX_TEXT_CHARS = 480;
const ABOVE = 40; // rows above the cursor searched for names (bounded by the enclosing function)
const BELOW = 4;
const NEAR_ABOVE = 12;
const FORGET_AFTER_VERSIONS = 100; // as the server's tolerance: older answers are asked again

const IDENT = /[A-Za-z_$][A-Za-z0-9_$]*/g;
const DEFINITION_START =
  /^\s*(?:export\s+)?(?:async\s+)?(?:def|class|function|func|fn|pub\s+fn|impl|interface|type|struct|public|private|protected|static)\b/;
const KEYWORDS = new Set(
  (
    'and as assert async await break case catch class const continue def default del delete do elif else ' +
    'enum except export extends false finally for from func function global go if impl import in interface ' +
    'is lambda let match mut new nil nonlocal none not null or package pass private protected pub public raise ' +
    'return self static struct super switch this throw true try type typeof undefined use var void while with ' +
    'yield None True False fn mod crate where loop defer chan map range select int str float bool string'
  ).split(' '),
);

export interface NameAt {
  name: string;
  pos: Position;
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/**
 * Names used around the cursor, nearest first: the rows just above and below it, then the rest of
 * the enclosing function (found by indentation: the nearest line above with less indentation that
 * starts a definition), each with the position of its occurrence nearest to the cursor. Keywords,
 * one-letter names, names after a dot (members: the receiver's definition covers them) and the
 * cursor line's unfinished word are left out.
 */
export function namesNearCursor(lines: string[], cursor: Position): NameAt[] {
  const row = Math.min(cursor.line, lines.length - 1);
  if (row < 0) {
    return [];
  }
  const cursorIndent = indentOf(lines[row] ?? '');
  let top = Math.max(0, row - ABOVE);
  for (let r = row - 1; r >= Math.max(0, row - ABOVE); r--) {
    const text = lines[r] ?? '';
    if (text.trim() && indentOf(text) < cursorIndent && DEFINITION_START.test(text)) {
      top = r;
      break;
    }
  }
  const bottom = Math.min(lines.length - 1, row + BELOW);
  const found = new Map<string, { pos: Position; distance: number }>();
  for (let r = top; r <= bottom; r++) {
    const text = lines[r] ?? '';
    for (const m of text.matchAll(IDENT)) {
      const name = m[0];
      const col = m.index ?? 0;
      if (name.length < 2 || KEYWORDS.has(name) || /^[0-9]/.test(name)) {
        continue;
      }
      if (col > 0 && text[col - 1] === '.') {
        continue;
      }
      if (r === row && col + name.length >= cursor.character && col <= cursor.character) {
        continue; // the word being typed
      }
      const distance = r < row - NEAR_ABOVE ? 1000 + (row - r) : Math.abs(r - row);
      const prev = found.get(name);
      if (!prev || distance < prev.distance) {
        found.set(name, { pos: { line: r, character: col }, distance });
      }
    }
  }
  return [...found.entries()]
    .sort((a, b) => a[1].distance - b[1].distance || a[1].pos.line - b[1].pos.line || a[1].pos.character - b[1].pos.character)
    .map(([name, v]) => ({ name, pos: v.pos }));
}

/**
 * The definition's first lines from its start row: the declaration line, then the lines indented
 * deeper than it (its signature's continuation, docstring, first members), at most
 * `MAX_TEXT_LINES` lines and `MAX_TEXT_CHARS` characters, whole lines only.
 */
export function definitionText(lines: string[]): string {
  const out: string[] = [];
  let used = 0;
  const first = lines[0];
  if (first === undefined || !first.trim()) {
    return '';
  }
  const base = indentOf(first);
  for (let i = 0; i < lines.length && out.length < MAX_TEXT_LINES; i++) {
    const line = (lines[i] ?? '').replace(/\s+$/, '');
    if (i > 0 && line.trim() && indentOf(line) <= base && !/^\s*[)\]]/.test(line)) {
      break; // the next definition at the same level
    }
    const cost = line.length + (out.length ? 1 : 0);
    if (used + cost > MAX_TEXT_CHARS) {
      break;
    }
    out.push(line);
    used += cost;
  }
  while (out.length && !out[out.length - 1].trim()) {
    out.pop();
  }
  return out.join('\n');
}

function withTimeout<T>(p: Promise<T>, ms: number, fallback: T): Promise<T> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(fallback), Math.max(0, ms));
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      () => {
        clearTimeout(timer);
        resolve(fallback);
      },
    );
  });
}

interface Remembered {
  version: number;
  sent: boolean; // resolved to another file and sent (false: nothing useful; not asked again)
}

/**
 * Collects and sends definitions for one document at a time. `run` is bounded (names, time);
 * names answered before for this document (within `FORGET_AFTER_VERSIONS` edits) are not asked
 * again, since the server keeps what it was sent.
 */
export class DefinitionsCollector {
  private readonly known = new Map<string, Map<string, Remembered>>();
  private running = false;

  constructor(
    private readonly host: DefinitionsHost,
    private readonly maxNames = MAX_NAMES,
    private readonly budgetMs = BUDGET_MS,
  ) {}

  /** Forget a closed document (its definitions went with it on the server too). */
  forget(uri: string): void {
    this.known.delete(uri);
  }

  /** Ask, read and send; resolves with what was sent (undefined: nothing new). Never throws. */
  async run(snap: Snapshot): Promise<DefinitionsParams | undefined> {
    if (this.running) {
      return undefined; // one run at a time: the next pause asks again
    }
    this.running = true;
    try {
      return await this.collect(snap);
    } catch {
      return undefined;
    } finally {
      this.running = false;
    }
  }

  private async collect(snap: Snapshot): Promise<DefinitionsParams | undefined> {
    const started = Date.now();
    let known = this.known.get(snap.uri);
    if (!known) {
      known = new Map();
      this.known.set(snap.uri, known);
    }
    for (const [name, r] of known) {
      if (snap.version - r.version > FORGET_AFTER_VERSIONS) {
        known.delete(name);
      }
    }
    const first = snap.firstLine ?? 0;
    const names = namesNearCursor(snap.lines, { line: snap.cursor.line - first, character: snap.cursor.character })
      .filter((n) => !known.has(n.name))
      .slice(0, this.maxNames)
      .map((n) => ({ name: n.name, pos: { line: n.pos.line + first, character: n.pos.character } }));
    if (!names.length) {
      return undefined;
    }
    const answers = await Promise.all(
      names.map((n) =>
        withTimeout(
          // A provider that fails answers "nothing" (not asked again); one too slow is asked again later.
          this.host.definitions(snap.uri, n.pos).catch((): Target[] => []),
          this.budgetMs,
          undefined as Target[] | undefined,
        ),
      ),
    );
    const entries: DefinitionEntry[] = [];
    const reads: Promise<void>[] = [];
    names.forEach((n, i) => {
      const targets = answers[i];
      if (targets === undefined) {
        return; // timed out: asked again at the next pause
      }
      const target = targets.find((t) => t.uri !== snap.uri);
      if (!target) {
        // Undefined, or defined in this file (the server has this file already): not asked again.
        known.set(n.name, { version: snap.version, sent: false });
        return;
      }
      reads.push(
        this.host.readLines(target.uri, target.range.start.line, MAX_TEXT_LINES * 3).then((lines) => {
          const text = lines ? definitionText(lines) : '';
          known.set(n.name, { version: snap.version, sent: text !== '' });
          if (text) {
            entries.push({ name: n.name, uri: target.uri, range: target.range, text });
          }
        }, () => undefined),
      );
    });
    const left = this.budgetMs - (Date.now() - started);
    await withTimeout(Promise.all(reads).then(() => undefined), Math.max(left, 20), undefined);
    if (!entries.length) {
      return undefined;
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    const params: DefinitionsParams = { uri: snap.uri, version: snap.version, definitions: [...entries] };
    this.host.send(params);
    return params;
  }
}
