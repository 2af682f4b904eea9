/**
 * Server discovery: find the `lsp-assist` executable.
 *
 * Order: the `lspAssist.server.path` setting, then each workspace folder's `.venv`/`venv`,
 * then `PATH`. Pure node code (no `vscode` import) so that it is unit-tested under node.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const EXECUTABLE = 'lsp-assist';

export interface Resolved {
  /** Absolute path (or a bare name for the caller to report) of the executable. */
  command: string;
  /** Where it came from, for messages and `Show stats`. */
  source: 'setting' | 'venv' | 'PATH';
}

export interface ResolveInput {
  /** The `lspAssist.server.path` setting; empty when unset. */
  configured: string;
  /** Workspace folder paths, first one first. */
  workspaceFolders: string[];
  /** The `PATH` environment value. */
  envPath: string | undefined;
  platform?: NodeJS.Platform;
}

function isExecutable(file: string, platform: NodeJS.Platform): boolean {
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile()) {
      return false;
    }
    if (platform === 'win32') {
      return true;
    }
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Expand `~` and `${workspaceFolder}` in a configured path. */
export function expandPath(configured: string, workspaceFolders: string[]): string {
  let value = configured.trim();
  if (value === '~' || value.startsWith('~/')) {
    value = path.join(os.homedir(), value.slice(1));
  }
  const folder = workspaceFolders[0];
  if (folder !== undefined) {
    value = value.split('${workspaceFolder}').join(folder);
  }
  if (!path.isAbsolute(value) && value.includes(path.sep) && folder !== undefined) {
    value = path.resolve(folder, value);
  }
  return value;
}

function candidateNames(platform: NodeJS.Platform): string[] {
  return platform === 'win32' ? [EXECUTABLE + '.exe', EXECUTABLE + '.cmd', EXECUTABLE] : [EXECUTABLE];
}

/** The virtualenv locations checked in each workspace folder. */
export function venvCandidates(folder: string, platform: NodeJS.Platform): string[] {
  const bin = platform === 'win32' ? 'Scripts' : 'bin';
  const out: string[] = [];
  for (const venv of ['.venv', 'venv']) {
    for (const name of candidateNames(platform)) {
      out.push(path.join(folder, venv, bin, name));
    }
  }
  return out;
}

/** Find the executable on a PATH string. */
export function whichOnPath(envPath: string | undefined, platform: NodeJS.Platform): string | undefined {
  if (!envPath) {
    return undefined;
  }
  const sep = platform === 'win32' ? ';' : ':';
  for (const dir of envPath.split(sep)) {
    if (!dir) {
      continue;
    }
    for (const name of candidateNames(platform)) {
      const file = path.join(dir, name);
      if (isExecutable(file, platform)) {
        return file;
      }
    }
  }
  return undefined;
}

/**
 * Resolve the server executable; undefined when none is found.
 *
 * A configured path that is a bare name (no separator) is looked up on PATH; a configured
 * path that does not exist resolves to undefined rather than silently falling back, so
 * the user learns that their setting is wrong.
 */
export function resolveServer(input: ResolveInput): Resolved | undefined {
  const platform = input.platform ?? process.platform;
  if (input.configured.trim() !== '') {
    const expanded = expandPath(input.configured, input.workspaceFolders);
    if (!expanded.includes('/') && !expanded.includes('\\')) {
      const onPath = expanded === EXECUTABLE ? whichOnPath(input.envPath, platform) : whichNamed(expanded, input.envPath, platform);
      return onPath ? { command: onPath, source: 'setting' } : undefined;
    }
    return isExecutable(expanded, platform) ? { command: expanded, source: 'setting' } : undefined;
  }
  for (const folder of input.workspaceFolders) {
    for (const file of venvCandidates(folder, platform)) {
      if (isExecutable(file, platform)) {
        return { command: file, source: 'venv' };
      }
    }
  }
  const found = whichOnPath(input.envPath, platform);
  return found ? { command: found, source: 'PATH' } : undefined;
}

function whichNamed(name: string, envPath: string | undefined, platform: NodeJS.Platform): string | undefined {
  if (!envPath) {
    return undefined;
  }
  const sep = platform === 'win32' ? ';' : ':';
  for (const dir of envPath.split(sep)) {
    if (dir && isExecutable(path.join(dir, name), platform)) {
      return path.join(dir, name);
    }
  }
  return undefined;
}
