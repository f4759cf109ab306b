// --workspace, --kv, --allow-net and --secret: the standard capabilities every command offers
// plugins. The workspace is always offered (by default a folder under the OS temp dir, so the
// demo's write_file writes somewhere real and harmless); kv only with a file, since it
// persists state; fetch only to the origins --allow-net names.
import type { StandardCapabilityOptions } from '@airlock/sandbox';
import { lstatSync, mkdirSync, statSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { UsageError } from './usage-error.js';

/** Under a folder of this user's own (created 0700, checked before use), so no other user can claim or read it. */
const PRIVATE_TEMP = join(tmpdir(), `airlock-${process.getuid?.() ?? userInfo().username}`);
export const DEFAULT_WORKSPACE_DIR = join(PRIVATE_TEMP, 'airlock-workspace');

export const HOST_CAPABILITY_FLAGS = {
  workspace: { type: 'string' },
  kv: { type: 'string' },
  'allow-net': { type: 'string', multiple: true },
  'allow-internal': { type: 'string', multiple: true },
  secret: { type: 'string', multiple: true },
} as const;

export const HOST_CAPABILITY_HELP = `  --workspace <dir>   the workspace plugins may be granted (workspace.*): one subfolder per
                      tenant (default: ${DEFAULT_WORKSPACE_DIR})
  --kv <file>         the SQLite file of the kv capability (kv.*), created when missing;
                      without it, kv is not offered
  --allow-net <origin> offer fetch, to this origin at most (repeatable; e.g. https://api.example.com,
                      https://*.example.com); a manifest's network.allow is narrowed to these
  --allow-internal <host>
                      let this DNS name, when --allow-net and the manifest name it exactly,
                      resolve to loopback, private or link-local addresses (repeatable). Without
                      it only IP-literal origins and localhost may reach internal addresses
  --secret NAME=env:VAR[@origin,origin...]
                      the value of a secret a manifest names, read from an environment variable
                      (repeatable); the host adds it to requests, the plugin never sees it.
                      @origins binds it: a manifest sending it anywhere else does not load.
                      Unbound, only one plugin may name it`;

export function standardOptions(values: { workspace?: string | undefined; kv?: string | undefined; 'allow-net'?: string[] | undefined; 'allow-internal'?: string[] | undefined; secret?: string[] | undefined }): StandardCapabilityOptions {
  const flagged = folderFlag('--workspace', values.workspace);
  if (flagged === undefined) privateTemp();
  const workspace = resolve(flagged ?? DEFAULT_WORKSPACE_DIR);
  const kv = folderFlag('--kv', values.kv);
  const allow = values['allow-net'] ?? [];
  const secrets = secretValues(values.secret ?? []);
  if (secrets !== undefined && allow.length === 0) throw new UsageError('--secret needs --allow-net: secrets go only into fetch requests');
  const allowInternal = values['allow-internal'] ?? [];
  if (allowInternal.length > 0 && allow.length === 0) throw new UsageError('--allow-internal needs --allow-net: it widens what fetch may reach');
  return {
    workspace,
    ...(kv === undefined ? {} : { kv: resolve(kv) }),
    ...(allow.length === 0 ? {} : { network: { allow, ...(allowInternal.length === 0 ? {} : { allowInternal }) } }),
    ...(secrets === undefined ? {} : { secrets }),
  };
}

/** NAME=env:VAR, read now: a missing variable is a usage error, never an empty secret sent later. */
function secretValues(flags: readonly string[]): NonNullable<StandardCapabilityOptions['secrets']> | undefined {
  if (flags.length === 0) return undefined;
  const secrets: Record<string, string | { value: string; origins: string[] }> = {};
  for (const flag of flags) {
    const match = /^([A-Za-z_][A-Za-z0-9_]{0,63})=env:([A-Za-z_][A-Za-z0-9_]*)(?:@(.+))?$/.exec(flag);
    if (match === null) throw new UsageError(`--secret ${flag}: must be NAME=env:VARIABLE or NAME=env:VARIABLE@https://origin[,https://origin] (the value is read from the environment, never from the command line)`);
    const [, name, variable, bound] = match as unknown as [string, string, string, string | undefined];
    if (Object.hasOwn(secrets, name)) throw new UsageError(`--secret ${name}: given twice`);
    const value = process.env[variable];
    if (value === undefined || value.length === 0) throw new UsageError(`--secret ${name}: environment variable ${variable} is not set`);
    secrets[name] = bound === undefined ? value : { value, origins: bound.split(',') };
  }
  return secrets;
}

/** The default workspace's parent: created 0700, or if it exists, a real folder of this user's that no one else can write. */
function privateTemp(): void {
  try {
    mkdirSync(PRIVATE_TEMP, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new UsageError(`cannot create ${PRIVATE_TEMP} for the default workspace (${(error as Error).message}); pass --workspace <dir>`);
  }
  const info = lstatSync(PRIVATE_TEMP);
  const uid = process.getuid?.();
  if (!info.isDirectory() || (uid !== undefined && info.uid !== uid) || (info.mode & 0o022) !== 0) {
    throw new UsageError(`${PRIVATE_TEMP} (the default workspace's folder) is not a private folder of this user's; remove it or pass --workspace <dir>`);
  }
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
  return message.replace(/^options\.network\.allow\.\d+/, '--allow-net').replace(/^options\.network\.allowInternal[.\d]*/, '--allow-internal').replace(/^options\.secrets\.(\w+)[.\w]*/, '--secret $1').replace(/^options\.(workspace|kv)\b[.\w]*/, '--$1').replace(/^options\.capabilities/, '--capabilities: options.capabilities');
}

/** The flag that offers each standard capability group, for a plugin that names one this command was not given. */
const OFFERED_BY: Readonly<Record<string, string>> = { kv: '--kv <file>', fetch: '--allow-net <origin>', workspace: '--workspace <dir>' };

/**
 * A "this host does not offer" problem about a standard capability group this command was
 * not given, with the flag that offers it (a misspelt name in a group on offer gets none).
 */
export function withOfferHint(problem: string): string {
  const found = /names "(kv|fetch|workspace)(?:\.[^"]*)?", which this host does not offer \(([^)]*)\)/.exec(problem);
  if (found === null) return problem;
  const [, group = '', offered = ''] = found;
  const onOffer = offered.split(/,\s*|\s+/).some((name) => name === group || name.startsWith(`${group}.`));
  return onOffer ? problem : `${problem}; offer it with ${OFFERED_BY[group] ?? ''}`;
}
