/**
 * The status bar item's text for the server's `lspAssist/status` notification (tier, last
 * latency, health). Kept free of the vscode module so that node's test runner can test it.
 */

/** `lspAssist/status` payload (the server contract); fields absent keep their last value. */
export interface StatusParams {
  tier?: string;
  provider?: string;
  outcome?: string;
  lastLatencyMs?: number;
  state?: 'ok' | 'warning' | 'error';
  message?: string;
  /** The server already showed `message` (window/showMessage): no second toast. */
  notified?: boolean;
}

/** Status item text, tooltip and state for the server's last `lspAssist/status`. */
export function statusView(s: StatusParams): [string, string, 'ok' | 'warning' | 'error'] {
  const tier = s.tier ?? 'fast';
  // Instant answers (typing-through, cache) take well under a millisecond: one decimal below 10 ms.
  const raw = typeof s.lastLatencyMs === 'number' && s.lastLatencyMs > 0 ? s.lastLatencyMs : undefined;
  const ms = raw === undefined ? undefined : raw < 10 ? Math.max(0.1, Math.round(raw * 10) / 10) : Math.round(raw);
  const latency = ms === undefined ? '' : ` ${ms} ms`;
  const state = s.state ?? 'ok';
  const icon = state === 'ok' ? '$(sparkle)' : state === 'warning' ? '$(warning)' : '$(error)';
  const via = [s.provider, s.outcome].filter((x) => x).join(', ');
  const tooltip = s.message
    ? `lsp-assist: ${s.message}`
    : `lsp-assist: last suggestion from tier ${tier}${via ? ` (${via})` : ''}${latency ? ` in${latency}` : ''}`;
  return [`${icon} ${tier}${latency}`, tooltip, state];
}

