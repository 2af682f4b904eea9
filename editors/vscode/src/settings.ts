/**
 * Settings: turn VS Code's flat `lspAssist.*` settings into the server's nested config dict.
 *
 * Pure code (no `vscode` import) so that it is unit-tested under plain node.
 * Only values the user set explicitly are forwarded: the server's own defaults and its
 * TOML files (user and workspace) then still apply to every key left unset.
 */

/** The settings section shared by every key. */
export const SECTION = 'lspAssist';

/** Keys that configure this client, not the server: never forwarded. */
const CLIENT_ONLY_PREFIXES = ['server.', 'trace.', 'editorDefinitions.', 'editorNextEdit.'];

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** True for keys (relative to the section) that belong to the server's config schema. */
export function isServerKey(key: string): boolean {
  return !CLIENT_ONLY_PREFIXES.some((prefix) => key.startsWith(prefix));
}

function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep-merge `source` into `target` (objects merge key by key; anything else replaces). */
export function deepMerge(target: JsonObject, source: JsonObject): JsonObject {
  for (const [key, value] of Object.entries(source)) {
    const current = target[key];
    if (isPlainObject(value) && isPlainObject(current)) {
      deepMerge(current, value);
    } else if (isPlainObject(value)) {
      target[key] = deepMerge({}, value);
    } else {
      target[key] = value;
    }
  }
  return target;
}

/**
 * Nest flat dotted keys: `{"tiers.fast.provider": "openai"}` -> `{tiers: {fast: {provider: "openai"}}}`.
 *
 * Keys are relative to the `lspAssist` section (a leading `lspAssist.` is stripped too).
 * Client-only keys and `undefined` values are dropped. Object values (e.g. `governance`)
 * are merged with any dotted keys under them, whatever the order.
 */
export function nestSettings(flat: Record<string, unknown>): JsonObject {
  const out: JsonObject = {};
  // Shorter keys first so that `governance.x` lands inside an explicit `governance` object.
  const keys = Object.keys(flat).sort((a, b) => a.split('.').length - b.split('.').length);
  for (const rawKey of keys) {
    const value = flat[rawKey];
    if (value === undefined) {
      continue;
    }
    const key = rawKey.startsWith(SECTION + '.') ? rawKey.slice(SECTION.length + 1) : rawKey;
    if (key === '' || !isServerKey(key)) {
      continue;
    }
    const parts = key.split('.');
    const leaf = parts.pop() as string;
    let node = out;
    for (const part of parts) {
      const next = node[part];
      if (!isPlainObject(next)) {
        node[part] = {};
      }
      node = node[part] as JsonObject;
    }
    const existing = node[leaf];
    if (isPlainObject(value) && isPlainObject(existing)) {
      deepMerge(existing, value);
    } else if (isPlainObject(value)) {
      node[leaf] = deepMerge({}, value);
    } else {
      node[leaf] = value as Json;
    }
  }
  return out;
}

/** The setting keys (relative to the section) that the extension's package.json declares. */
export function declaredKeys(packageJson: unknown): string[] {
  const props = (packageJson as { contributes?: { configuration?: { properties?: Record<string, unknown> } } })
    ?.contributes?.configuration?.properties;
  if (!props) {
    return [];
  }
  return Object.keys(props)
    .filter((key) => key.startsWith(SECTION + '.'))
    .map((key) => key.slice(SECTION.length + 1));
}

/** What `WorkspaceConfiguration.inspect` returns, reduced to the parts used here. */
export interface Inspected {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
  globalLanguageValue?: unknown;
  workspaceLanguageValue?: unknown;
  workspaceFolderLanguageValue?: unknown;
}

/** The explicitly set value of one setting, the most specific scope winning; undefined when unset. */
export function explicitValue(inspected: Inspected | undefined): unknown {
  if (!inspected) {
    return undefined;
  }
  return (
    inspected.workspaceFolderLanguageValue ??
    inspected.workspaceFolderValue ??
    inspected.workspaceLanguageValue ??
    inspected.workspaceValue ??
    inspected.globalLanguageValue ??
    inspected.globalValue
  );
}

/** Build the server config from the declared keys and an `inspect` function. */
export function collectServerConfig(keys: string[], inspect: (key: string) => Inspected | undefined): JsonObject {
  const flat: Record<string, unknown> = {};
  for (const key of keys) {
    if (isServerKey(key)) {
      flat[key] = explicitValue(inspect(key));
    }
  }
  return nestSettings(flat);
}

/** `workspace/didChangeConfiguration` params as the server contract wants them. */
export function didChangeParams(config: JsonObject): { settings: { [SECTION]: JsonObject } } {
  return { settings: { [SECTION]: config } };
}
