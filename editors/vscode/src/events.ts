/**
 * Suggestion events for VS Code (the server's telemetry/events.py), pure logic, unit-tested
 * without VS Code.
 *
 * VS Code's stable API has no "shown" event (`handleDidShowCompletionItem` and the partial
 * accept hook are proposed API only), so an item counts as shown when it was returned and
 * not superseded for `SHOWN_AFTER_MS` (750 ms, Sourcegraph's rule): another answer with a
 * different suggestion id for the document within that time cancels it. An answer that
 * continues the suggestion on screen (typing through it, a grown suggestion) keeps its id
 * and keeps it shown. Accepting runs the item's `lspAssist.accepted` command (the server
 * records a whole accept; an accept implies shown). A shown suggestion that is replaced by
 * another one or by nothing is `typed_over` when the document changed meanwhile, and
 * `dismissed` when only the cursor moved; an Escape is invisible to extensions, so it is
 * counted when the next answer comes (typed over after an edit). VS Code's own partial
 * accepts (Ctrl+Right) run no command and are not reported.
 */

export const SHOWN_AFTER_MS = 750;

export type ClientEvent = 'shown' | 'dismissed' | 'typed_over';
export type Sink = (id: string, event: ClientEvent) => void;

interface Timers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const realTimers: Timers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

interface DocState {
  pending?: { id: string; timer: unknown };
  shown?: string; // the id on screen (reported shown, not resolved)
  edited: boolean; // the text changed since the last answer
}

export class ShownTracker {
  private readonly docs = new Map<string, DocState>();
  private readonly resolved = new Set<string>();

  constructor(
    private readonly sink: Sink,
    private readonly timers: Timers = realTimers,
  ) {}

  private doc(uri: string): DocState {
    let d = this.docs.get(uri);
    if (!d) {
      d = { edited: false };
      this.docs.set(uri, d);
    }
    return d;
  }

  /** An answer for `uri` whose first item has suggestion `id` (undefined: no item). */
  returned(uri: string, id: string | undefined): void {
    const d = this.doc(uri);
    const edited = d.edited;
    d.edited = false;
    if (id !== undefined && (id === d.shown || id === d.pending?.id)) {
      return; // the same suggestion, continued
    }
    if (d.pending) {
      this.timers.clear(d.pending.timer); // superseded before 750 ms: never shown
      d.pending = undefined;
    }
    if (d.shown !== undefined) {
      const old = d.shown;
      d.shown = undefined;
      if (!this.resolved.has(old)) {
        this.report(old, edited ? 'typed_over' : 'dismissed');
      }
    }
    if (id === undefined || this.resolved.has(id)) {
      return;
    }
    const timer = this.timers.set(() => {
      if (d.pending?.id === id) {
        d.pending = undefined;
        d.shown = id;
        this.report(id, 'shown');
      }
    }, SHOWN_AFTER_MS);
    d.pending = { id, timer };
  }

  /** The document changed (typing, an accept). */
  changed(uri: string): void {
    this.doc(uri).edited = true;
  }

  /** The item's command ran: the server recorded the accept (and shown). */
  accepted(id: string): void {
    this.remember(id);
    for (const d of this.docs.values()) {
      if (d.pending?.id === id) {
        this.timers.clear(d.pending.timer);
        d.pending = undefined;
      }
      if (d.shown === id) {
        d.shown = undefined;
      }
    }
  }

  /** The document closed or the editor went away: a suggestion on screen was dismissed. */
  closed(uri: string): void {
    const d = this.docs.get(uri);
    if (!d) {
      return;
    }
    if (d.pending) {
      this.timers.clear(d.pending.timer);
    }
    if (d.shown !== undefined && !this.resolved.has(d.shown)) {
      this.report(d.shown, 'dismissed');
    }
    this.docs.delete(uri);
  }

  private report(id: string, event: ClientEvent): void {
    if (event !== 'shown') {
      this.remember(id);
    }
    this.sink(id, event);
  }

  private remember(id: string): void {
    this.resolved.add(id);
    if (this.resolved.size > 500) {
      this.resolved.delete(this.resolved.values().next().value as string); // oldest first
    }
  }
}

/** The suggestion id an item carries (its `lspAssist.accepted` command's argument). */
export function suggestionId(item: { command?: { command: string; arguments?: unknown[] } } | undefined): string | undefined {
  const args = item?.command?.command === 'lspAssist.accepted' ? item.command.arguments : undefined;
  const id = args?.[0];
  return typeof id === 'string' ? id : undefined;
}
