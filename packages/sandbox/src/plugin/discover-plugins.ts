// `--plugins` takes a plugin folder or a folder of plugin folders.
import { closestName } from '@airlock/core';
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
    for (const child of children) {
      if (await exists(join(child, MANIFEST_FILE))) plugins.push(child);
      else await refuseMisnamedManifest(child);
    }
    if (plugins.length === 0) throw new SandboxError('NO_PLUGINS', `${given}: holds no ${MANIFEST_FILE}, and no folder inside it does`);
    found.push(...plugins);
  }
  return [...new Set(found)];
}

/**
 * A folder beside the plugins whose manifest is misspelt (`airlock.plugin.jsn`) would be passed
 * over without a word, its plugin missing: said instead. Other folders (assets, notes) are
 * passed over as before.
 */
async function refuseMisnamedManifest(dir: string): Promise<void> {
  let names: string[];
  try {
    names = (await readdir(dir, { withFileTypes: true })).filter((entry) => !entry.isDirectory()).map((entry) => entry.name);
  } catch {
    return;
  }
  for (const name of names) {
    // Near in length as well as spelling: `airlock.plugin.json.bak` (a plugin set aside) is no typo.
    if (Math.abs(name.length - MANIFEST_FILE.length) <= 2 && closestName(name, [MANIFEST_FILE]) === MANIFEST_FILE) {
      throw new SandboxError('NO_PLUGINS', `${dir}: holds ${JSON.stringify(name)}, not ${MANIFEST_FILE}: rename it to load this plugin, or move the folder out`);
    }
  }
}
