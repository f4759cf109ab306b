// The manifest is read only from a regular file inside the plugin folder, as the module is,
// and a manifest that is not JSON is reported by where, never by quoting what it holds.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discoverPluginFolders } from '../src/plugin/discover-plugins.js';
import { MANIFEST_FILE, readPluginFolder } from '../src/plugin/read-plugin-folder.js';

const SECRET = 'ghp_SuperSecretToken123';
let root: string;
let plugin: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'airlock-manifest-'));
  plugin = join(root, 'plugin');
  await mkdir(plugin);
  await writeFile(join(plugin, 'index.js'), 'export default { tools: [] };\n');
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('reading a plugin folder\'s manifest', () => {
  it('refuses a manifest symlinked outside the folder, and says nothing of what it leads to', async () => {
    await writeFile(join(root, 'secret'), SECRET);
    await symlink(join(root, 'secret'), join(plugin, MANIFEST_FILE));
    const { problems } = await readPluginFolder(plugin);
    expect(problems).toEqual([`${join(plugin, MANIFEST_FILE)}: resolves outside the plugin folder`]);
  });

  it('refuses a key given twice, whose first value a reader sees and whose last is in force', async () => {
    await writeFile(join(plugin, MANIFEST_FILE), JSON.stringify({ name: 'twice', module: './index.js' }).replace('}', ',"permissions":{"default":"deny","default":"allow"}}'));
    const { problems } = await readPluginFolder(plugin);
    expect(problems).toEqual([`${join(plugin, MANIFEST_FILE)}: permissions.default is given twice; JSON keeps only the last, so the file reads otherwise than it runs: keep one`]);
  });

  it('reports a manifest that is not JSON by position, never quoting its text', async () => {
    await writeFile(join(plugin, MANIFEST_FILE), `{"name": ${SECRET}}`);
    const { problems } = await readPluginFolder(plugin);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('not valid JSON');
    expect(problems[0]).not.toContain('Secret');
    await writeFile(join(plugin, MANIFEST_FILE), `{"name": "x"} ${SECRET}`);
    // Node 22 and later's V8 adds the line and column.
    const [problem] = (await readPluginFolder(plugin)).problems;
    expect(problem?.slice(join(plugin, MANIFEST_FILE).length)).toMatch(/^: not valid JSON \(at position 14( \(line 1 column 15\))?\)$/);
  });

  it('a manifest that is a FIFO is found, said to be no regular file, and never waited on', async () => {
    execFileSync('mkfifo', [join(plugin, MANIFEST_FILE)]);
    expect(await discoverPluginFolders([plugin])).toEqual([plugin]);
    const { problems } = await readPluginFolder(plugin);
    expect(problems).toEqual([`${join(plugin, MANIFEST_FILE)}: is not a regular file (a FIFO, a device or a folder)`]);
  }, 10_000);
});

describe('a folder of plugin folders', () => {
  it('a folder whose manifest is misspelt is said, not passed over with its plugin missing; other folders and a manifest set aside are passed over', async () => {
    await writeFile(join(plugin, MANIFEST_FILE), JSON.stringify({ name: 'plugin', module: './index.js' }));
    const misspelt = join(root, 'misspelt');
    await mkdir(misspelt);
    await writeFile(join(misspelt, 'airlock.plugin.jsn'), '{}');
    await expect(discoverPluginFolders([root])).rejects.toMatchObject({ code: 'NO_PLUGINS', message: `${misspelt}: holds "airlock.plugin.jsn", not ${MANIFEST_FILE}: rename it to load this plugin, or move the folder out` });
    await rm(misspelt, { recursive: true });
    for (const [folder, file] of [['assets', 'logo.png'], ['set-aside', `${MANIFEST_FILE}.bak`]] as const) {
      await mkdir(join(root, folder));
      await writeFile(join(root, folder, file), '{}');
    }
    expect(await discoverPluginFolders([root])).toEqual([plugin]);
  });

  it('a plugin folder linked in is loaded, as when named; one whose name is not UTF-8 is refused, not passed over', async () => {
    await writeFile(join(plugin, MANIFEST_FILE), JSON.stringify({ name: 'plugin', module: './index.js' }));
    const elsewhere = await mkdtemp(join(tmpdir(), 'airlock-linked-'));
    try {
      await writeFile(join(elsewhere, MANIFEST_FILE), JSON.stringify({ name: 'linked', module: './index.js' }));
      await symlink(elsewhere, join(root, 'linked'));
      expect(await discoverPluginFolders([root])).toEqual([join(root, 'linked'), plugin]);
      // A folder named by bytes that are not UTF-8 (Linux allows any), holding a plugin.
      const bad = Buffer.concat([Buffer.from(`${root}/bad`), Buffer.from([0xff])]);
      await mkdir(bad);
      await writeFile(Buffer.concat([bad, Buffer.from(`/${MANIFEST_FILE}`)]), '{}');
      await expect(discoverPluginFolders([root])).rejects.toMatchObject({ code: 'NO_PLUGINS', message: `${root}: holds a plugin folder whose name is not valid UTF-8 ("bad\u00ff" read as Latin-1): rename it to load this plugin` });
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });
});
