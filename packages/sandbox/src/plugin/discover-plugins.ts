// `--plugins` takes a plugin folder or a folder of plugin folders.
import { lstat, readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { SandboxError } from '../errors/sandbox-error.js';
import { MANIFEST_FILE } from './read-plugin-folder.js';

/** Whether something is there by that name: a manifest that is no regular file (a FIFO, a device) is the plugin's problem to report, not a folder without one. */
async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

export async function discoverPluginFolders(paths: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const given of paths) {
    const dir = resolve(given);
    let info;
    try {
      info = await stat(dir);
    } catch {
      throw new SandboxError('NO_PLUGINS', `${given}: no such folder`);
    }
    if (!info.isDirectory()) throw new SandboxError('NO_PLUGINS', `${given}: not a folder (expected a plugin folder or a folder of plugin folders)`);
    if (await exists(join(dir, MANIFEST_FILE))) {
      found.push(dir);
      continue;
    }
    const children = (await readdir(dir, { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => join(dir, entry.name)).sort();
    const plugins: string[] = [];
    for (const child of children) if (await exists(join(child, MANIFEST_FILE))) plugins.push(child);
    if (plugins.length === 0) throw new SandboxError('NO_PLUGINS', `${given}: holds no ${MANIFEST_FILE}, and no folder inside it does`);
    found.push(...plugins);
  }
  return [...new Set(found)];
}
