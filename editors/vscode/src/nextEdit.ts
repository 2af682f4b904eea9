/**
 * Next-edit suggestions, the editor-independent part: the wire types of
 * `textDocument/copilotInlineEdit`, which answer may be shown, what Tab does (jump, accept, or
 * nothing when the document changed), how the edit is drawn (struck-through old text, the new
 * text after it), and the request sequencing (the newest request wins; an older reply is
 * dropped). nextEditFeature.ts binds this to VS Code. No `vscode` import: unit-tested in node.
 */

export const METHOD = 'textDocument/copilotInlineEdit';
export const DID_SHOW = 'textDocument/didShowInlineEdit';
export const REJECT_COMMAND = 'lspAssist.nextEdit.reject';
export const CONTEXT_KEY = 'lspAssist.nextEditVisible';

export interface Pos {
  line: number;
  character: number;
}
export interface Rng {
  start: Pos;
  end: Pos;
}
export interface NextEditItem {
  text: string;
  textDocument: { uri: string; version: number };
  range: Rng;
  command?: { title: string; command: string; arguments?: unknown[] };
  id?: string;
}
export interface NextEditParams {
  textDocument: { uri: string; version: number };
  position: Pos;
}

/** True when the server advertises next edits (`capabilities.experimental.nextEdit`). */
export function supported(capabilities: unknown): boolean {
  const exp = (capabilities as { experimental?: { nextEdit?: { method?: unknown } } } | undefined)?.experimental;
  return exp?.nextEdit?.method === METHOD;
}

/** The edit's id: `id`, else the first argument of its command (clients built for Copilot's
 * server read it there). */
export function itemId(item: NextEditItem): string | undefined {
  if (typeof item.id === 'string') {
    return item.id;
  }
  const arg = item.command?.arguments?.[0];
  return typeof arg === 'string' ? arg : undefined;
}

/** Identifies an edit at a version: a dismissed one is not shown again there. */
export function editKey(item: NextEditItem): string {
  const r = item.range;
  return [item.textDocument.version, r.start.line, r.start.character, r.end.line, r.end.character, item.text].join(':');
}

function isItem(x: unknown): x is NextEditItem {
  const i = x as NextEditItem;
  return (
    typeof i === 'object' &&
    i !== null &&
    typeof i.text === 'string' &&
    typeof i.textDocument?.uri === 'string' &&
    typeof i.textDocument?.version === 'number' &&
    typeof i.range?.start?.line === 'number' &&
    typeof i.range?.end?.line === 'number'
  );
}

/**
 * The edit to show from an answer, or undefined: the first of `edits` (alternatives, not a
 * sequence), only for the document and version it was asked for and still has, and not one the
 * user dismissed at that version.
 */
export function pick(
  result: unknown,
  doc: { uri: string; version: number },
  askedVersion: number,
  rejected: ReadonlySet<string>,
): NextEditItem | undefined {
  const edits = (result as { edits?: unknown } | null | undefined)?.edits;
  if (!Array.isArray(edits) || edits.length === 0 || !isItem(edits[0])) {
    return undefined;
  }
  const item = edits[0];
  if (item.textDocument.uri !== doc.uri || item.textDocument.version !== askedVersion || doc.version !== askedVersion) {
    return undefined;
  }
  if (rejected.has(editKey(item))) {
    return undefined;
  }
  return item;
}

export type TabAction = 'jump' | 'accept' | 'stale' | 'none';

/** What Tab does: jump to the edit from another line, apply it from its line; never apply
 * it to another document version than the one it was computed for. */
export function tabAction(item: NextEditItem | undefined, cursorLine: number, docVersion: number): TabAction {
  if (!item) {
    return 'none';
  }
  if (docVersion !== item.textDocument.version) {
    return 'stale';
  }
  return cursorLine === item.range.start.line ? 'accept' : 'jump';
}

/** Where the cursor goes after the edit is applied: the end of the new text. */
export function endAfterApply(item: NextEditItem): Pos {
  const lines = item.text.split('\n');
  const last = lines[lines.length - 1];
  if (lines.length === 1) {
    return { line: item.range.start.line, character: item.range.start.character + last.length };
  }
  return { line: item.range.start.line + lines.length - 1, character: last.length };
}

/** How the edit is drawn: the range struck through (when it replaces or deletes text), the new
 * text after its end (its lines joined with ⏎, as one decoration cannot span lines), and a
 * status text when the edit is outside the visible lines. */
export interface Look {
  strike: Rng | undefined;
  after: string;
  at: Pos;
}

export const MAX_AFTER_CHARS = 120;

export function look(item: NextEditItem): Look {
  const r = item.range;
  const empty = r.start.line === r.end.line && r.start.character === r.end.character;
  let after = item.text.split('\n').join(' ⏎ ');
  if (after.length > MAX_AFTER_CHARS) {
    after = after.slice(0, MAX_AFTER_CHARS - 1) + '…';
  }
  return { strike: empty ? undefined : r, after, at: r.end };
}

/** The status bar text while the edit is off screen, or undefined while it is visible. */
export function offScreenText(item: NextEditItem, visible: { start: number; end: number }[]): string | undefined {
  const line = item.range.start.line;
  if (visible.some((v) => line >= v.start && line <= v.end)) {
    return undefined;
  }
  const above = visible.length > 0 && line < visible[0].start;
  return `$(arrow-${above ? 'up' : 'down'}) next edit: line ${line + 1} (Tab)`;
}

/** Request sequencing: each new request supersedes the one before (which is cancelled), and a
 * reply counts only when it answers the newest. */
export class Sequencer {
  private seq = 0;
  private cancelCurrent: (() => void) | undefined;

  /** Start a request; returns its ticket. `cancel` is called when a newer one starts. */
  begin(cancel: () => void): number {
    this.cancel();
    this.cancelCurrent = cancel;
    return ++this.seq;
  }

  /** Cancel the outstanding request (if any): its reply will not count. */
  cancel(): void {
    const c = this.cancelCurrent;
    this.cancelCurrent = undefined;
    this.seq++;
    c?.();
  }

  /** True when `ticket` is still the newest request; it is then finished. */
  finish(ticket: number): boolean {
    if (ticket !== this.seq) {
      return false;
    }
    this.cancelCurrent = undefined;
    return true;
  }
}
