// Reads a plugin folder: its manifest, checked key by key, and its module source,
// which must stay inside the folder. Collects every problem instead of stopping at one.
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, readFile, realpath, stat, type FileHandle } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { DEFAULT_PLUGIN_LIMITS, HOST_LIMIT_CAPS, type PluginLimits } from '../manifest/host-limits.js';
import { describeIssue, manifestSchema, type PluginManifest } from '../manifest/manifest-schema.js';
import { repeatedKeys } from '../manifest/repeated-keys.js';
import type { PluginSpec } from '../worker/worker-protocol.js';
import { expandGrants } from '../capabilities/standard-capabilities.js';
import { uncoveredSecretOrigins } from '../capabilities/secret-origins.js';

export const MANIFEST_FILE = 'airlock.plugin.json';
const MAX_MODULE_BYTES = 8 * 1024 * 1024;
const MAX_MANIFEST_BYTES = 256 * 1024;

export interface PluginFolder {
  readonly dir: string;
  readonly manifestPath: string;
  readonly manifest: PluginManifest | undefined;
  readonly spec: PluginSpec | undefined;
  /** Every problem found, each prefixed with the file it is in. */
  readonly problems: string[];
}

export async function readPluginFolder(dir: string, caps: PluginLimits = HOST_LIMIT_CAPS, offered: ReadonlySet<string> = new Set()): Promise<PluginFolder> {
  const manifestPath = join(dir, MANIFEST_FILE);
  const problems: string[] = [];
  const done = (manifest?: PluginManifest, spec?: PluginSpec): PluginFolder => ({ dir, manifestPath, manifest, spec, problems });

  const text = await readManifest(dir, manifestPath, problems);
  if (text === undefined) return done();
  let raw: unknown;
  try {
    // Editors on some systems start UTF-8 files with a byte-order mark: not part of the JSON.
    raw = JSON.parse(text.startsWith('\ufeff') ? text.slice(1) : text);
  } catch (error) {
    // V8's message quotes the text around the fault: the file may be anything a symlink or a
    // mistake led to (a token, /proc/self/environ). Where, never what.
    const where = /at position \d+(?: \(line \d+ column \d+\))?/.exec((error as Error).message)?.[0];
    problems.push(`${manifestPath}: not valid JSON${where === undefined ? '' : ` (${where})`}`);
    return done();
  }
  for (const path of repeatedKeys(text)) problems.push(`${manifestPath}: ${path} is given twice; JSON keeps only the last, so the file reads otherwise than it runs: keep one`);
  const parsed = manifestSchema(caps).safeParse(raw, { reportInput: true });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push(`${manifestPath}: ${describeIssue(issue)}`);
    return done();
  }
  const manifest = parsed.data;
  // Capabilities are host functions granted by name (a group, like "workspace", grants its
  // functions): a plugin that needs one this host does not offer must not load as if it had it.
  const grants = expandGrants(manifest.capabilities ?? [], offered);
  for (const index of grants.missing) {
    const list = offered.size === 0 ? 'it offers none' : `it offers ${[...offered].sort().join(', ')}`;
    problems.push(`${manifestPath}: capabilities.${index} names "${(manifest.capabilities ?? [])[index] ?? ''}", which this host does not offer (${list})`);
  }
  for (const problem of uncoveredSecretOrigins(manifest)) problems.push(`${manifestPath}: ${problem}`);
  // On past those: the module and its tools are checked too (`airlock check` reports every
  // problem at once), and a folder with problems never loads whatever its spec.

  const source = await readModule(dir, manifest.module, problems);
  if (source === undefined) return done(manifest);
  const given = manifest.limits ?? {};
  // The schema already refused values above the caps; a default above a lowered cap is clamped.
  const limits: PluginLimits = {
    memoryMb: Math.min(given.memoryMb ?? DEFAULT_PLUGIN_LIMITS.memoryMb, caps.memoryMb),
    timeoutMs: Math.min(given.timeoutMs ?? DEFAULT_PLUGIN_LIMITS.timeoutMs, caps.timeoutMs),
    cpuMs: Math.min(given.cpuMs ?? DEFAULT_PLUGIN_LIMITS.cpuMs, caps.cpuMs),
    maxOutputBytes: Math.min(given.maxOutputBytes ?? DEFAULT_PLUGIN_LIMITS.maxOutputBytes, caps.maxOutputBytes),
  };
  const identity = {
    name: manifest.name,
    limits,
    realm: manifest.realm ?? 'fresh',
    grants: { webAssembly: manifest.grants?.webAssembly === true, sharedArrayBuffer: manifest.grants?.sharedArrayBuffer === true },
    capabilities: grants.granted,
  };
  // Everything a sandbox process, a worker or an isolate keeps by this key is the manifest's
  // as much as the module's (a process holds the first spec it was sent for a key, a worker
  // its isolates' memory limit): the key covers both, and all of the hash.
  const key = `${manifest.name}@${createHash('sha256').update(JSON.stringify(identity)).update('\u0000').update(source).digest('hex')}`;
  return done(manifest, { key, source, ...identity } satisfies PluginSpec);
}

/** The manifest's text: a regular file inside the plugin folder (as the module must be), or a problem said. */
async function readManifest(dir: string, manifestPath: string, problems: string[]): Promise<string | undefined> {
  let file: string;
  try {
    file = await realpath(manifestPath);
    // A symlink may not lead the manifest outside the plugin folder: check would print what it found there.
    if (!insideFolder(await realpath(dir), file)) return (problems.push(`${manifestPath}: resolves outside the plugin folder`), undefined);
  } catch {
    problems.push(`${manifestPath}: not found (a plugin folder needs ${MANIFEST_FILE})`);
    return undefined;
  }
  // Opened without blocking (a FIFO would wait for a writer) and without following a symlink
  // swapped in since; what it is is asked of the open file itself.
  let handle: FileHandle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (error) {
    problems.push(`${manifestPath}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    return undefined;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return (problems.push(`${manifestPath}: is not a regular file (a FIFO, a device or a folder)`), undefined);
    if (info.size > MAX_MANIFEST_BYTES) return (problems.push(`${manifestPath}: larger than ${MAX_MANIFEST_BYTES} bytes`), undefined);
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/** Whether `file` (resolved) lies inside `root` (resolved). */
function insideFolder(root: string, file: string): boolean {
  const inside = relative(root, file);
  return !(inside.startsWith('..') || inside.startsWith(sep));
}

async function readModule(dir: string, modulePath: string, problems: string[]): Promise<string | undefined> {
  const where = `${join(dir, MANIFEST_FILE)}: module`;
  let root: string;
  let file: string;
  try {
    root = await realpath(dir);
    file = await realpath(join(dir, modulePath));
  } catch {
    problems.push(`${where} "${modulePath}" does not exist`);
    return undefined;
  }
  // A symlink may not lead the module outside the plugin folder.
  if (!insideFolder(root, file)) {
    problems.push(`${where} "${modulePath}" resolves outside the plugin folder`);
    return undefined;
  }
  const info = await stat(file);
  if (!info.isFile()) return (problems.push(`${where} "${modulePath}" is not a file`), undefined);
  if (info.size > MAX_MODULE_BYTES) return (problems.push(`${where} "${modulePath}" is larger than ${MAX_MODULE_BYTES} bytes`), undefined);
  return readFile(file, 'utf8');
}
