// `--plugins` takes a plugin folder or a folder of plugin folders.
import { closestName } from '@airlock/core';
import { lstat, readdir, stat } from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';
import { join, resolve, sep } from 'node:path';
import { SandboxError } from '../errors/sandbox-error.js';
import { MANIFEST_FILE } from './read-plugin-folder.js';

/** Whether something is there by that name: a manifest that is no regular file (a FIFO, a device) is the plugin's problem to report, not a folder without one. */
async function exists(path: string | Buffer): Promise<boolean> {
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
    const children = await childFolders(dir);
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
 * The folders in `dir`, sorted: symbolic links to folders too (a plugin folder linked in is
 * loaded, as it is when named directly). A folder whose name is not UTF-8 cannot be named in a
 * path Airlock reads, so one holding a manifest is refused rather than passed over.
 */
async function childFolders(dir: string): Promise<string[]> {
  const folders: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, encoding: 'buffer' })) {
    const raw = entry.name;
    const rawPath = Buffer.concat([Buffer.from(`${dir}${sep}`), raw]);
    const isFolder = entry.isDirectory() || (entry.isSymbolicLink() && (await stat(rawPath).then((info) => info.isDirectory(), () => false)));
    if (!isFolder) continue;
    if (!isUtf8(raw)) {
      if (await exists(Buffer.concat([rawPath, Buffer.from(`${sep}${MANIFEST_FILE}`)]))) {
        throw new SandboxError('NO_PLUGINS', `${dir}: holds a plugin folder whose name is not valid UTF-8 (${JSON.stringify(raw.toString('latin1'))} read as Latin-1): rename it to load this plugin`);
      }
      continue;
    }
    folders.push(join(dir, raw.toString('utf8')));
  }
  return folders.sort();
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
