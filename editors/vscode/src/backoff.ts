/**
 * Restart policy for a crashed server: exponential backoff with a cap and a give-up point.
 *
 * Pure code with an injectable clock so that it is unit-tested under node. A server that
 * stayed up for `stableAfterMs` is considered healthy again and its crash count resets.
 */

export interface BackoffOptions {
  baseDelayMs: number;
  maxDelayMs: number;
  /** Consecutive crashes after which we stop restarting and tell the user once. */
  maxRestarts: number;
  /** Uptime after which a crash no longer counts as consecutive. */
  stableAfterMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = {
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxRestarts: 5,
  stableAfterMs: 60_000,
};

export class RestartBackoff {
  private crashes = 0;
  private startedAt: number | undefined;

  constructor(
    private readonly options: BackoffOptions = DEFAULT_BACKOFF,
    private readonly now: () => number = Date.now,
  ) {}

  /** Record that the server (re)started. */
  started(): void {
    this.startedAt = this.now();
  }

  /** Forget the crash history (a manual restart, a settings change). */
  reset(): void {
    this.crashes = 0;
  }

  /** The number of consecutive crashes recorded. */
  get count(): number {
    return this.crashes;
  }

  /**
   * Record a crash; returns the delay before the next restart, or undefined to give up.
   */
  crashed(): number | undefined {
    const now = this.now();
    if (this.startedAt !== undefined && now - this.startedAt >= this.options.stableAfterMs) {
      this.crashes = 0;
    }
    this.startedAt = undefined;
    this.crashes += 1;
    if (this.crashes > this.options.maxRestarts) {
      return undefined;
    }
    const delay = this.options.baseDelayMs * 2 ** (this.crashes - 1);
    return Math.min(delay, this.options.maxDelayMs);
  }
}

/**
 * Shows each distinct message once until `reset()`: bad states (server missing, crashing,
 * misconfigured) produce one clear message, not one per keystroke.
 */
export class OnceNotifier {
  private readonly shown = new Set<string>();

  constructor(private readonly show: (key: string, message: string) => void) {}

  notify(key: string, message: string): boolean {
    if (this.shown.has(key)) {
      return false;
    }
    this.shown.add(key);
    this.show(key, message);
    return true;
  }

  reset(key?: string): void {
    if (key === undefined) {
      this.shown.clear();
    } else {
      this.shown.delete(key);
    }
  }
}
