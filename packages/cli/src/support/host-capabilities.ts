// --workspace and --kv: the standard capabilities every command offers plugins. The workspace
// is always offered (by default a folder under the OS temp dir, so the demo's write_file
// writes somewhere real and harmless); kv only with a file, since it persists state.
import type { StandardCapabilityOptions } from '@airlock/sandbox';
import { statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { UsageError } from './usage-error.js';

export const DEFAULT_WORKSPACE_DIR = join(tmpdir(), 'airlock-workspace');

export const HOST_CAPABILITY_FLAGS = {
  workspace: { type: 'string' },
  kv: { type: 'string' },
} as const;

export const HOST_CAPABILITY_HELP = `  --workspace <dir>   the workspace plugins may be granted (workspace.*): one subfolder per
                      tenant (default: ${DEFAULT_WORKSPACE_DIR})
  --kv <file>         the SQLite file of the kv capability (kv.*), created when missing;
                      without it, kv is not offered`;

export function standardOptions(values: { workspace?: string | undefined; kv?: string | undefined }): StandardCapabilityOptions {
  const workspace = resolve(folderFlag('--workspace', values.workspace) ?? DEFAULT_WORKSPACE_DIR);
  const kv = folderFlag('--kv', values.kv);
  return { workspace, ...(kv === undefined ? {} : { kv: resolve(kv) }) };
}

/** An empty value or one naming the wrong kind of thing is a usage error now, not a failing call later. */
function folderFlag(flag: '--workspace' | '--kv', value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.length === 0) throw new UsageError(`${flag} must name a ${flag === '--kv' ? 'file' : 'folder'}`);
  let kind: 'file' | 'folder' | 'other' | undefined;
  try {
    const info = statSync(value);
    kind = info.isDirectory() ? 'folder' : info.isFile() ? 'file' : 'other';
  } catch {
    kind = undefined; // created when first used
  }
  if (flag === '--workspace' && kind !== undefined && kind !== 'folder') throw new UsageError(`--workspace ${value}: not a folder`);
  if (flag === '--kv' && kind !== undefined && kind !== 'file') throw new UsageError(`--kv ${value}: not a file`);
  return value;
}

/** "options.kv: ..." from the sandbox, as the flag the operator typed. */
export function asFlagMessage(message: string): string {
  return message.replace(/^options\.(workspace|kv)\b[.\w]*/, '--$1').replace(/^options\.capabilities/, '--capabilities: options.capabilities');
}
