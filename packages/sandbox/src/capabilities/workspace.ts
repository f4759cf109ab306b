// The workspace capability: files in a folder per tenant under a folder the host chose.
// Containment does not rest on string checks alone: the folders on the way are opened one
// at a time with O_NOFOLLOW (a symlink is refused, never followed), and on Linux every later
// step names its file through the opened folder's descriptor (/proc/self/fd/N/name, the
// openat of Node), so swapping a folder for a symlink after it was checked changes nothing.
// Files are opened with O_NOFOLLOW and checked, by real path and inode, to be inside the
// tenant's folder before a byte is read. Writes go to a temp file renamed over the target,
// so a reader sees the old content or the new, never half. Quotas count the whole folder.
import type { JsonObject, JsonValue } from '@airlock/core';
import { randomBytes } from 'node:crypto';
import { constants, existsSync, type Stats } from 'node:fs';
import { lstat, mkdir, open, opendir, realpath, rename, rmdir, stat, unlink, type FileHandle } from 'node:fs/promises';
import { join, relative, isAbsolute, sep } from 'node:path';
import type { Capability, CapabilityContext } from '../plugin/capability-handler.js';
import { argumentObject, CapabilityRefusal, optionalStringField, stringField } from './capability-argument.js';
import { PerCallAllowance } from './per-call-allowance.js';
import { TEMP_PREFIX, tenantFolderName, workspaceSegments } from './workspace-path.js';

export const WORKSPACE_FUNCTIONS = ['workspace.read', 'workspace.write', 'workspace.list', 'workspace.delete', 'workspace.stat'] as const;
/** Host caps when the embedder names none: per tenant folder. */
export const DEFAULT_WORKSPACE_MAX_BYTES = 64 * 1024 * 1024;
export const DEFAULT_WORKSPACE_MAX_FILES = 10_000;
/** A read answers within the capability channel's 1 MiB, JSON escapes included. */
const MAX_READ_BYTES = 512 * 1024;
const MAX_LIST_ENTRIES = 1000;
/**
 * What one call may read and list in all. Each read and each listed entry is work on the
 * embedder's main thread, which every tenant shares: one call of an outside tester read a
 * 512 KiB file 1,000 times (500 MB), or listed a 999-entry folder 1,000 times (a million
 * lstats, the event loop 99% busy for 30 s), and a neighbour's calls waited up to 270 ms.
 */
const MAX_READ_BYTES_PER_CALL = 8 * 1024 * 1024;
const MAX_LISTED_PER_CALL = 10_000;
const readAllowance = new PerCallAllowance((max) => `workspace.read: this call has read ${max} bytes in all, as much as one call may`);
const listAllowance = new PerCallAllowance((max) => `workspace.list: this call has listed ${max} entries in all, as many as one call may`);
/**
 * Entries one call's writes may walk in all: each write counts the tenant folder for its quota
 * (an entry an lstat), and 300 refused writes into a folder of 9,000 files took 25 s of the
 * host's CPU (an outside tester's find). Ten writes into a full folder (maxFiles 10,000).
 */
const MAX_WALKED_PER_CALL = 100_000;
const walkAllowance = new PerCallAllowance((max) => `workspace.write: this call's writes have counted ${max} entries of the folder in all, as many as one call may`);
/** A read racing the tenant's own write of the same file (replaced by rename) opens again, this many times at most. */
const SAME_FILE_ATTEMPTS = 3;
const FILE_CHANGED = 'workspace file changed';

export interface WorkspaceQuota {
  readonly maxBytes: number;
  /** Files and folders together. */
  readonly maxFiles: number;
}

export interface WorkspaceSettings extends WorkspaceQuota {
  /** The folder holding one subfolder per tenant. */
  readonly dir: string;
}

interface Usage {
  bytes: number;
  entries: number;
}

type Entry = { readonly name: string; readonly type: 'file' | 'directory' | 'other'; readonly bytes: number };

/** The five workspace functions; `quotaOf` gives a plugin's manifest quota, applied under the host's. */
export function workspaceCapabilities(settings: WorkspaceSettings, quotaOf: (plugin: string) => { readonly maxBytes?: number | undefined; readonly maxFiles?: number | undefined } | undefined): Record<(typeof WORKSPACE_FUNCTIONS)[number], Capability> {
  const workspace = new Workspace(settings);
  const quota = (plugin: string): WorkspaceQuota => {
    const manifest = quotaOf(plugin);
    return { maxBytes: Math.min(manifest?.maxBytes ?? settings.maxBytes, settings.maxBytes), maxFiles: Math.min(manifest?.maxFiles ?? settings.maxFiles, settings.maxFiles) };
  };
  const pathOf = (argument: JsonValue, name: string, allowRoot = false): { object: JsonObject; segments: string[] } => {
    const object = argumentObject(argument, name);
    const path = allowRoot ? (optionalStringField(object, 'path', name) ?? '') : stringField(object, 'path', name);
    return { object, segments: workspaceSegments(path, allowRoot) };
  };
  return {
    'workspace.read': (argument, context) => workspace.read(context, pathOf(argument, 'workspace.read').segments, Math.min(quota(context.plugin).maxBytes, MAX_READ_BYTES_PER_CALL)),
    'workspace.write': (argument, context) => {
      const { object, segments } = pathOf(argument, 'workspace.write');
      return workspace.write(context, segments, stringField(object, 'content', 'workspace.write'), quota(context.plugin));
    },
    'workspace.list': (argument, context) => workspace.list(context, pathOf(argument, 'workspace.list', true).segments),
    'workspace.delete': (argument, context) => workspace.remove(context, pathOf(argument, 'workspace.delete').segments),
    'workspace.stat': (argument, context) => workspace.stat(context, pathOf(argument, 'workspace.stat', true).segments),
  };
}

class Workspace {
  readonly #settings: WorkspaceSettings;
  /** Writes and deletes in one tenant folder run one at a time, so a quota check holds until its write lands (keyed by the folder, which is what the quota counts). */
  readonly #queues = new Map<string, Promise<unknown>>();

  constructor(settings: WorkspaceSettings) {
    this.#settings = settings;
  }

  /** `maxReadBytes`: what this call may read in all. */
  async read(context: CapabilityContext, segments: string[], maxReadBytes: number): Promise<JsonValue> {
    readAllowance.check(context, maxReadBytes);
    const root = await this.#tenantRoot(context.tenant);
    await using parent = await directory(root, segments.slice(0, -1), false);
    const file = parent.child(segments.at(-1) as string);
    const { handle, info } = await openSame(file, root);
    try {
      if (info.size > MAX_READ_BYTES) throw new CapabilityRefusal(`file larger than ${MAX_READ_BYTES} bytes`);
      // Counted before the read.
      readAllowance.charge(context, info.size, maxReadBytes);
      const buffer = Buffer.alloc(info.size);
      const { bytesRead } = await handle.read(buffer, 0, info.size, 0);
      return { path: segments.join('/'), content: buffer.subarray(0, bytesRead).toString('utf8'), bytes: bytesRead };
    } finally {
      await handle.close();
    }
  }

  write(context: CapabilityContext, segments: string[], content: string, quota: WorkspaceQuota): Promise<JsonValue> {
    return this.#serial(tenantFolderName(context.tenant), async () => {
      context.signal.throwIfAborted();
      const root = await this.#tenantRoot(context.tenant);
      const bytes = Buffer.byteLength(content, 'utf8');
      const dirs = segments.slice(0, -1);
      const missing = await missingDirectories(root, dirs);
      const target = join(root, ...segments);
      const existing = await lstatOrUndefined(target);
      if (existing !== undefined && !existing.isFile()) throw new CapabilityRefusal('not a file');
      const usage = await usageOf(root, () => walkAllowance.charge(context, 1, MAX_WALKED_PER_CALL));
      if (usage.bytes - (existing?.size ?? 0) + bytes > quota.maxBytes) throw new CapabilityRefusal('workspace byte quota exceeded');
      if (usage.entries + missing + (existing === undefined ? 1 : 0) > quota.maxFiles) throw new CapabilityRefusal('workspace file quota exceeded');
      await using parent = await directory(root, dirs, true);
      const temp = parent.child(`${TEMP_PREFIX}${randomBytes(8).toString('hex')}`);
      const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
      try {
        try {
          await assertSame(handle, temp, root);
          await handle.writeFile(content, 'utf8');
          await handle.datasync();
        } finally {
          await handle.close();
        }
        await parent.recheck();
        await rename(temp, parent.child(segments.at(-1) as string));
      } catch (error) {
        await unlink(temp).catch(() => undefined);
        throw error;
      }
      return { path: segments.join('/'), bytes };
    });
  }

  async list(context: CapabilityContext, segments: string[]): Promise<JsonValue> {
    listAllowance.check(context, MAX_LISTED_PER_CALL);
    const root = await this.#tenantRoot(context.tenant);
    await using folder = await directory(root, segments, false);
    const entries: Entry[] = [];
    let truncated = false;
    for await (const dirent of await opendir(folder.path)) {
      if (dirent.name.startsWith(TEMP_PREFIX)) continue;
      if (entries.length >= MAX_LIST_ENTRIES) {
        truncated = true;
        break;
      }
      listAllowance.charge(context, 1, MAX_LISTED_PER_CALL);
      const info = await lstatOrUndefined(folder.child(dirent.name));
      if (info === undefined) continue;
      entries.push({ name: dirent.name, type: info.isFile() ? 'file' : info.isDirectory() ? 'directory' : 'other', bytes: info.isFile() ? info.size : 0 });
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { path: segments.join('/'), entries, truncated };
  }

  remove(context: CapabilityContext, segments: string[]): Promise<JsonValue> {
    return this.#serial(tenantFolderName(context.tenant), async () => {
      const root = await this.#tenantRoot(context.tenant);
      let opened: Folder;
      try {
        opened = await directory(root, segments.slice(0, -1), false);
      } catch (error) {
        // No folder on the way: nothing to delete, as when the file alone is missing.
        if (isMissing(error)) return { path: segments.join('/'), deleted: false };
        throw error;
      }
      await using parent = opened;
      const target = parent.child(segments.at(-1) as string);
      const info = await lstatOrUndefined(target);
      if (info === undefined) return { path: segments.join('/'), deleted: false };
      // unlink and rmdir act on the name itself, never on what a symlink points to.
      if (info.isDirectory()) await rmdir(target);
      else await unlink(target);
      return { path: segments.join('/'), deleted: true };
    });
  }

  async stat(context: CapabilityContext, segments: string[]): Promise<JsonValue> {
    const root = await this.#tenantRoot(context.tenant);
    let parent: Folder;
    try {
      parent = await directory(root, segments.slice(0, -1), false);
    } catch (error) {
      if (isMissing(error)) return { path: segments.join('/'), exists: false };
      throw error;
    }
    await using _closing = parent;
    const info = segments.length === 0 ? await lstat(root) : await lstatOrUndefined(parent.child(segments.at(-1) as string));
    if (info === undefined) return { path: segments.join('/'), exists: false };
    const type = info.isFile() ? 'file' : info.isDirectory() ? 'directory' : 'other';
    return { path: segments.join('/'), exists: true, type, bytes: info.isFile() ? info.size : 0, modifiedMs: Math.trunc(info.mtimeMs) };
  }

  /** The tenant's folder, created on first use, as a real path (no symlink in it). */
  async #tenantRoot(tenant: string): Promise<string> {
    // Private to this user: folders 0700, files 0600 (the umask may narrow, never widen).
    await mkdir(this.#settings.dir, { recursive: true, mode: 0o700 });
    const base = await realpath(this.#settings.dir);
    // A base another user made (say in /tmp, before us) is theirs to rename and swap in: refused.
    const uid = process.getuid?.();
    if (uid !== undefined && uid !== 0 && (await lstat(base)).uid !== uid) throw new CapabilityRefusal('workspace folder is owned by another user');
    const root = join(base, tenantFolderName(tenant));
    await mkdir(root, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    const info = await lstat(root);
    if (!info.isDirectory()) throw new CapabilityRefusal('tenant workspace is not a folder');
    return root;
  }

  #serial<T>(folder: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#queues.get(folder) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.then(() => undefined, () => undefined);
    this.#queues.set(folder, settled);
    void settled.then(() => {
      if (this.#queues.get(folder) === settled) this.#queues.delete(folder);
    });
    return next;
  }
}

/** On Linux a folder's descriptor names it for good: /proc/self/fd/N/name resolves in that very folder. */
const DESCRIPTOR_PATHS = process.platform === 'linux' && existsSync('/proc/self/fd');
const FOLDER_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** An opened folder of the workspace; children are named through it. Close it when done. */
interface Folder extends AsyncDisposable {
  /** The folder as a path to hand to fs calls (its descriptor's path on Linux). */
  readonly path: string;
  child(name: string): string;
  /** Elsewhere than Linux: the folder's path must still lead to the folder opened. */
  recheck(): Promise<void>;
}

function folderOf(handle: FileHandle, real: string): Folder {
  const path = DESCRIPTOR_PATHS ? `/proc/self/fd/${handle.fd}` : real;
  return {
    path,
    child: (name) => `${path}/${name}`,
    async recheck() {
      if (DESCRIPTOR_PATHS) return;
      const [opened, named] = await Promise.all([handle.stat(), stat(real)]);
      if ((await realpath(real)) !== real || opened.ino !== named.ino || opened.dev !== named.dev) throw new CapabilityRefusal('workspace folder changed');
    },
    [Symbol.asyncDispose]: () => handle.close(),
  };
}

/** Opens the folders from the tenant's down one at a time, never through a symlink; creates missing ones when asked. */
async function directory(root: string, segments: readonly string[], create: boolean): Promise<Folder> {
  let folder = folderOf(await open(root, FOLDER_FLAGS), root);
  let real = root;
  try {
    for (const segment of segments) {
      const next = folder.child(segment);
      let handle: FileHandle;
      try {
        // O_NOFOLLOW|O_DIRECTORY: a symlink (ELOOP) or a file (ENOTDIR) here is refused.
        handle = await open(next, FOLDER_FLAGS);
      } catch (error) {
        if (!isMissing(error) || !create) throw error;
        await mkdir(next, { mode: 0o700 }).catch((made: NodeJS.ErrnoException) => {
          if (made.code !== 'EEXIST') throw made;
        });
        handle = await open(next, FOLDER_FLAGS);
      }
      await folder[Symbol.asyncDispose]();
      real = join(real, segment);
      folder = folderOf(handle, real);
    }
    await folder.recheck();
    return folder;
  } catch (error) {
    await Promise.resolve(folder[Symbol.asyncDispose]()).catch(() => undefined);
    throw error;
  }
}

/**
 * Opens the file at `path` for reading as the file the path names, inside the root. A write
 * of the same file replaces it by rename; one that lands between the open and the check is
 * a race with the tenant's own write, not an attack: the read opens again (a few times).
 */
async function openSame(path: string, root: string): Promise<{ handle: FileHandle; info: Stats }> {
  for (let attempt = 1; ; attempt += 1) {
    // O_NONBLOCK: a FIFO planted in the folder must not hang the host.
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw new CapabilityRefusal('not a file');
      // A hard link is the same file under another name, which may lie outside the workspace:
      // Airlock never makes one (writes rename a new file over the name), someone else planted it.
      if (info.nlink > 1) throw new CapabilityRefusal('a file with other names (a hard link)');
      await assertSame(handle, path, root);
      return { handle, info };
    } catch (error) {
      await handle.close();
      if (attempt >= SAME_FILE_ATTEMPTS || !(error instanceof CapabilityRefusal) || error.message !== FILE_CHANGED) throw error;
    }
  }
}

/** What the handle holds is the file at this path now, and that path is inside the root. */
async function assertSame(handle: FileHandle, path: string, root: string): Promise<void> {
  const real = await realpath(path);
  if (!inside(root, real)) throw new CapabilityRefusal('outside the workspace');
  const [opened, named] = await Promise.all([handle.stat(), stat(real)]);
  if (opened.ino !== named.ino || opened.dev !== named.dev) throw new CapabilityRefusal(FILE_CHANGED);
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  // Only ".." itself climbs: "...", "..foo" are names like any other.
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

async function missingDirectories(root: string, segments: readonly string[]): Promise<number> {
  let current = root;
  for (const [index, segment] of segments.entries()) {
    current = join(current, segment);
    if ((await lstatOrUndefined(current)) === undefined) return segments.length - index;
  }
  return 0;
}

/** Bytes of files and count of entries under the tenant's folder, never following a symlink. */
async function usageOf(root: string, onEntry: () => void): Promise<Usage> {
  const usage: Usage = { bytes: 0, entries: 0 };
  const pending = [root];
  while (pending.length > 0) {
    const folder = pending.pop() as string;
    for await (const dirent of await opendir(folder)) {
      onEntry();
      const path = join(folder, dirent.name);
      const info = await lstatOrUndefined(path);
      if (info === undefined) continue;
      usage.entries += 1;
      if (info.isFile()) usage.bytes += info.size;
      else if (info.isDirectory()) pending.push(path);
    }
  }
  return usage;
}

async function lstatOrUndefined(path: string) {
  try {
    return await lstat(path);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

function isMissing(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ENOENT';
}
