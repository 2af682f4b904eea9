/**
 * How `lspAssist/suggestionReady` grows the ghost text in VS Code (pure logic, unit-tested
 * without VS Code).
 *
 * VS Code's only way to ask again is `editor.action.inlineSuggest.trigger`, an Invoked
 * request, and VS Code does not ask at all while it holds an Invoked request's answer for
 * the same document version and position (`UpdateRequest.satisfies`). So, for each
 * suggestionReady:
 * 1. the client asks the server itself for the grown suggestion (as Automatic: one item,
 *    at once; Invoked would wait for the stream's end to gather choices);
 * 2. it triggers VS Code, first hiding the current ghost when VS Code holds an Invoked
 *    answer here (it would not ask otherwise);
 * 3. the request VS Code then makes is answered from step 1 without another round trip to
 *    the server, so the ghost is replaced by the longer one in the same frame or the next.
 * When the user asked (an Invoked request of their own at this document version and line),
 * suggestionReady does nothing: its single item would replace the choices being cycled.
 * Except a suggestionReady that carries `choices`: the server answered that Invoked request
 * at its first line and has gathered the other choices since; the client fetches them (an
 * Invoked request, answered from what the server kept) and shows them in place.
 * For the same reason (VS Code would not ask again after our re-request), the extension's
 * own Alt+\ / Alt+] / Alt+[ fetch the server's choices the same way (`asked`, then
 * `prepare(..., true)`) instead of relying on VS Code's trigger.
 */

export type TriggerKind = 'automatic' | 'invoked';

/** How long Alt+] waits for the server's choices when the answer on screen has none yet. */
export const CHOICES_WAIT_MS = 1000;

/** A prepared answer is used by the request VS Code makes within this time. */
export const GROW_MATCH_MS = 1500;

export function docKey(uri: string, version: number, line: number): string {
  return `${uri}#${version}#${line}`;
}

export type Step = 'trigger' | 'hideAndTrigger' | 'drop';

export class GrowPolicy<T> {
  private prepared: { key: string; value: T; since: number } | undefined;
  private invokedAt: string | undefined;
  private explicitAt: string | undefined;
  private cycledAt: string | undefined;
  private counts = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** suggestionReady for the document state `key`: true when the client should fetch the grown text. */
  onReady(key: string): boolean {
    return this.invokedAt !== key; // the user's choices are on screen (or on their way): keep them
  }

  /** suggestionReady with `choices` for `key`: true when the user's Invoked answer is shown
   * there, so the client fetches the choices and shows them as the user's own. */
  onChoicesReady(key: string): boolean {
    return this.invokedAt === key && this.cycledAt !== key; // never move the user off the item they cycled to
  }

  /** The user cycled the choices at `key` (Alt+] / Alt+[). */
  cycled(key: string): void {
    this.cycledAt = key;
  }

  /** The user asked for choices at `key` (Alt+\): from now on growth does not replace them. */
  asked(key: string): void {
    this.invokedAt = key;
  }

  /** Items VS Code got for its last request at `key` (1 until answered otherwise). */
  count(key: string): number {
    return this.counts.get(key) ?? 1;
  }

  /** What the request at `key` returned to VS Code. */
  answered(key: string, items: number): void {
    this.counts.clear(); // one position at a time
    this.counts.set(key, items);
  }

  /** An answer fetched by the client (the grown suggestion, or the user's choices when
   * `user`): what to do to make VS Code show it. */
  prepare(key: string, value: T, user = false): Step {
    if (this.invokedAt === key && !user) {
      return 'drop'; // the user asked meanwhile
    }
    this.prepared = { key, value, since: this.now() };
    return this.explicitAt === key ? 'hideAndTrigger' : 'trigger';
  }

  /** A request VS Code makes at `key`: the kind to send, or the prepared answer to return. */
  onRequest(key: string, kind: TriggerKind): { kind: TriggerKind; prepared?: T } {
    if (kind === 'automatic') {
      // VS Code sends none while it holds an Invoked answer here, so this replaces it.
      this.explicitAt = undefined;
      return { kind };
    }
    this.explicitAt = key;
    const prepared = this.prepared;
    this.prepared = undefined;
    if (prepared && prepared.key === key && this.now() - prepared.since <= GROW_MATCH_MS) {
      return { kind: 'automatic', prepared: prepared.value };
    }
    this.invokedAt = key; // the user asked: until they type or move, no growth replaces it
    return { kind: 'invoked' };
  }
}
