/**
 * The *Warm cache* result in one line, with its severity: the server's summary names each
 * tier's endpoint ("ok", "cannot connect to ..."), the index, the local model and what was
 * precomputed, so a failed warm-up never reads "cache warmed".
 */

export interface WarmSummary {
  error?: string;
  files?: number;
  symbols?: number;
  errors?: number;
  index?: string;
  endpoints?: Record<string, string>;
  local_model?: string;
  precomputed?: number;
  total_seconds?: number;
}

const FINE = new Set(['ok', 'in process', 'local model']);

export function formatWarmup(r: WarmSummary | undefined): { message: string; severity: 'info' | 'warning' | 'error' } {
  if (!r || typeof r !== 'object') {
    return { message: 'lsp-assist: warm-up finished without a summary', severity: 'warning' };
  }
  if (r.error) {
    return { message: `lsp-assist: warm-up failed: ${r.error}`, severity: 'error' };
  }
  const parts: string[] = [];
  let bad = false;
  if (typeof r.files === 'number') {
    parts.push(`${r.files} files indexed (${r.symbols ?? 0} symbols)`);
    if ((r.errors ?? 0) > 0) {
      parts.push(`${r.errors} files could not be read`);
      bad = true;
    }
  } else if (r.index) {
    parts.push(`index ${r.index}`);
  }
  for (const tier of ['fast', 'quality', 'backup']) {
    const state = r.endpoints?.[tier];
    if (state) {
      parts.push(`${tier}: ${state}`);
      bad = bad || !FINE.has(state);
    }
  }
  if (r.local_model) {
    parts.push(r.local_model);
  }
  parts.push(`${r.precomputed ?? 0} suggestions precomputed`);
  const seconds = (r.total_seconds ?? 0).toFixed(1);
  return {
    message: `lsp-assist: warm-up ${bad ? 'done with problems' : 'done'} in ${seconds} s: ${parts.join('; ')}`,
    severity: bad ? 'warning' : 'info',
  };
}
