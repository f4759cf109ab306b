// The workspace capability against real files in temp folders, driven by a plugin that asks
// for whatever the test says: every way out of the tenant's folder is refused, writes are
// atomic, quotas hold, and a grant of single functions grants only those.
import { createEngine, type JsonValue, type ToolResult } from '@airlock/core';
import { createSandbox, workspaceFolder, type Sandbox, type SandboxOptions } from '@airlock/sandbox';
import { link, lstat, mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pluginFolder } from './support/plugin-harness.js';

let base: string;
let workspace: string;
let outside: string;
const opened: Sandbox[] = [];

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'airlock-ws-test-'));
  outside = join(base, 'outside');
  await mkdir(outside);
  await writeFile(join(outside, 'secret.txt'), 'OUTSIDE SECRET');
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((sandbox) => sandbox.close()));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

async function open(manifest: Record<string, unknown> = {}, options: SandboxOptions = {}) {
  workspace = await mkdtemp(join(base, 'ws-'));
  const dir = await pluginFolder('plugins/relay.js', { capabilities: ['workspace'], limits: { timeoutMs: 5000 }, ...manifest });
  const sandbox = createSandbox({ mode: 'in-process', threads: 2, ...options, workspace: typeof options.workspace === 'object' ? { ...options.workspace, dir: workspace } : workspace });
  opened.push(sandbox);
  await sandbox.loadPlugins([dir]);
  const engine = createEngine({ tools: sandbox.tools(), policy: { default: 'allow' } });
  const run = async (tool: string, args: JsonValue, tenant = 'acme'): Promise<ToolResult> => (await engine.run([{ id: 'c1', name: tool, arguments: JSON.stringify(args) }], { tenant }))[0]!;
  const cap = async (name: string, argument: JsonValue, tenant = 'acme') => {
    const result = await run('cap', { name, argument }, tenant);
    if (result.isError) throw new Error(`call failed: ${result.error.code} ${result.error.message}`);
    return result.value as { ok: boolean; value?: JsonValue; error?: string };
  };
  return { sandbox, run, cap, tenantDir: join(workspace, 'acme') };
}

describe('workspace capability', () => {
  it('writes for real into the tenant folder, reads back, lists, stats and deletes', async () => {
    const { cap, tenantDir } = await open();
    expect(await cap('workspace.write', { path: 'notes/todo.md', content: 'buy milk €' })).toEqual({ ok: true, value: { path: 'notes/todo.md', bytes: 12 } });
    expect(await readFile(join(tenantDir, 'notes/todo.md'), 'utf8')).toBe('buy milk €');
    expect(await cap('workspace.read', { path: './notes//todo.md' })).toMatchObject({ ok: true, value: { content: 'buy milk €', bytes: 12 } });
    expect(await cap('workspace.list', {})).toMatchObject({ ok: true, value: { entries: [{ name: 'notes', type: 'directory' }] } });
    expect(await cap('workspace.stat', { path: 'notes/todo.md' })).toMatchObject({ ok: true, value: { exists: true, type: 'file', bytes: 12 } });
    expect(await cap('workspace.delete', { path: 'notes/todo.md' })).toMatchObject({ ok: true, value: { deleted: true } });
    expect(await cap('workspace.stat', { path: 'notes/todo.md' })).toMatchObject({ ok: true, value: { exists: false } });
    // Deleting under a folder that does not exist deletes nothing, like a missing file.
    expect(await cap('workspace.delete', { path: 'gone/todo.md' })).toEqual({ ok: true, value: { path: 'gone/todo.md', deleted: false } });
  });

  it('refuses every path that could name a place outside the folder, with a generic error', async () => {
    const { cap, tenantDir } = await open();
    const tricks = ['/etc/hosts', join(outside, 'x.txt'), '../x.txt', 'a/../../x.txt', '..', 'a/..', '..\\x.txt', 'C:/x.txt', '~/x.txt', 'a\u0000b', 'a\nb', 'a\u202eb', 'a\u200bb', 'x'.repeat(256), `${'d/'.repeat(600)}x`, '.airlock-tmp-1234', '', '.', 42 as unknown as string];
    for (const path of tricks) {
      for (const name of ['workspace.write', 'workspace.read']) {
        const answer = await cap(name, { path, content: 'pwned' });
        expect(answer, `${name} ${JSON.stringify(path)}`).toEqual({ ok: false, error: `capability ${name} failed` });
      }
    }
    expect(await readdir(outside)).toEqual(['secret.txt']);
    expect(await readdir(workspace).then((names) => names.flatMap((name) => (name === 'acme' ? [] : [name])))).toEqual([]);
    expect(await readdir(tenantDir).catch(() => [])).toEqual([]);
  });

  it('names that only start with dots are names: "...", "..foo", ".hidden"', async () => {
    const { cap, tenantDir } = await open();
    for (const path of ['...', '..foo', '..dir/..bar.txt', '.hidden']) {
      expect(await cap('workspace.write', { path, content: path }), path).toMatchObject({ ok: true });
      expect(await cap('workspace.read', { path }), path).toMatchObject({ ok: true, value: { content: path } });
    }
    expect((await readdir(tenantDir)).sort()).toEqual(['...', '..dir', '..foo', '.hidden']);
  });

  it('never follows a symlink out: not as a folder, not as the file, not for list', async () => {
    const { cap, tenantDir } = await open();
    await cap('workspace.write', { path: 'seed.txt', content: 'x' });
    await symlink(outside, join(tenantDir, 'out'));
    await symlink(join(outside, 'secret.txt'), join(tenantDir, 'secret.txt'));
    for (const [name, argument] of [
      ['workspace.read', { path: 'out/secret.txt' }],
      ['workspace.read', { path: 'secret.txt' }],
      ['workspace.write', { path: 'out/new.txt', content: 'pwned' }],
      ['workspace.write', { path: 'secret.txt', content: 'pwned' }],
      ['workspace.write', { path: 'out/deeper/new.txt', content: 'pwned' }],
      ['workspace.list', { path: 'out' }],
      ['workspace.delete', { path: 'out/secret.txt' }],
    ] as const) {
      expect(await cap(name, argument), `${name} ${argument.path}`).toMatchObject({ ok: false });
    }
    expect(await readdir(outside)).toEqual(['secret.txt']);
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('OUTSIDE SECRET');
  });

  it('never reads a hard link planted to a file outside, and a write replaces the link, not the file', async () => {
    const { cap, tenantDir } = await open();
    await cap('workspace.write', { path: 'seed.txt', content: 'x' });
    await link(join(outside, 'secret.txt'), join(tenantDir, 'hard.txt'));
    expect(await cap('workspace.read', { path: 'hard.txt' })).toEqual({ ok: false, error: 'capability workspace.read failed' });
    expect(await cap('workspace.write', { path: 'hard.txt', content: 'mine' })).toMatchObject({ ok: true });
    expect(await cap('workspace.read', { path: 'hard.txt' })).toMatchObject({ ok: true, value: { content: 'mine' } });
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('OUTSIDE SECRET');
  });

  it('a folder swapped for a symlink while calls run never lets a read or write through', async () => {
    const { run, tenantDir } = await open();
    await mkdir(join(tenantDir, 'd'), { recursive: true });
    await writeFile(join(tenantDir, 'd', 'secret.txt'), 'inside');
    await symlink(outside, join(tenantDir, 'link'));
    let flipping = true;
    let flips = 0;
    // The attacker outside Airlock: swaps d between the real folder and a symlink out, as fast
    // as it can. A write may recreate a missing d meanwhile (inside, harmless): moved aside.
    const attempt = (work: Promise<unknown>): Promise<boolean> => work.then(() => true, () => false);
    const flipper = (async () => {
      let stray = 0;
      while (flipping) {
        await attempt(rename(join(tenantDir, 'd'), join(tenantDir, 'real')));
        if (await attempt(rename(join(tenantDir, 'link'), join(tenantDir, 'd')))) flips += 1;
        await attempt(rename(join(tenantDir, 'd'), join(tenantDir, 'link')));
        if (!(await attempt(rename(join(tenantDir, 'real'), join(tenantDir, 'd'))))) await attempt(rename(join(tenantDir, 'd'), join(tenantDir, `stray-${(stray += 1)}`)));
        if (!(await attempt(lstat(join(tenantDir, 'link'))))) await attempt(symlink(outside, join(tenantDir, 'link')));
      }
    })();
    const seen: string[] = [];
    for (let round = 0; round < 30; round += 1) {
      const requests = Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? { name: 'workspace.read', argument: { path: 'd/secret.txt' } } : { name: 'workspace.write', argument: { path: `d/new-${round}-${i}.txt`, content: 'pwned' } }));
      const result = await run('many', { requests });
      for (const answer of (result as unknown as { value: { ok: boolean; value?: { content?: string } }[] }).value) if (answer.ok && answer.value?.content !== undefined) seen.push(answer.value.content);
    }
    flipping = false;
    await flipper;
    expect(flips).toBeGreaterThan(0);
    expect(seen.filter((content) => content !== 'inside')).toEqual([]);
    expect(await readdir(outside)).toEqual(['secret.txt']);
  });

  it('writes atomically: a reader sees the old content or the new, never a mix, and no temp file stays', async () => {
    const { run, cap, tenantDir } = await open();
    const a = 'a'.repeat(200_000);
    const b = 'b'.repeat(200_000);
    await cap('workspace.write', { path: 'big.txt', content: a });
    const requests = Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? { name: 'workspace.write', argument: { path: 'big.txt', content: i % 2 === 0 ? b : a } } : { name: 'workspace.read', argument: { path: 'big.txt' } }));
    const result = await run('many', { requests, digest: true });
    for (const answer of (result as unknown as { value: { ok: boolean; value: { content?: string } }[] }).value) {
      expect(answer.ok).toBe(true);
      if (answer.value.content !== undefined) expect(['a:200000', 'b:200000']).toContain(answer.value.content);
    }
    expect(await readdir(tenantDir)).toEqual(['big.txt']);
  });

  it('holds the byte and file quotas, counting a replaced file once', async () => {
    const { cap, tenantDir } = await open({ workspace: { maxBytes: 100, maxFiles: 3 } });
    expect(await cap('workspace.write', { path: 'a.txt', content: 'x'.repeat(60) })).toMatchObject({ ok: true });
    expect(await cap('workspace.write', { path: 'b.txt', content: 'x'.repeat(60) })).toMatchObject({ ok: false });
    expect(await cap('workspace.write', { path: 'a.txt', content: 'x'.repeat(90) })).toMatchObject({ ok: true });
    expect(await cap('workspace.write', { path: 'b.txt', content: 'x' })).toMatchObject({ ok: true });
    // A new folder counts as an entry too: d/ and d/c.txt would make four.
    expect(await cap('workspace.write', { path: 'd/c.txt', content: 'x' })).toMatchObject({ ok: false });
    expect(await cap('workspace.write', { path: 'c.txt', content: 'x' })).toMatchObject({ ok: true });
    expect(await cap('workspace.write', { path: 'e.txt', content: '' })).toMatchObject({ ok: false });
    expect((await readdir(tenantDir)).sort()).toEqual(['a.txt', 'b.txt', 'c.txt']);
  });

  it('holds the quota against writes racing each other', async () => {
    const { run, tenantDir } = await open({ workspace: { maxBytes: 1000 } });
    const requests = Array.from({ length: 16 }, (_, i) => ({ name: 'workspace.write', argument: { path: `f${i}.txt`, content: 'x'.repeat(300) } }));
    const result = await run('many', { requests });
    expect((result as unknown as { value: { ok: boolean }[] }).value.filter((answer) => answer.ok)).toHaveLength(3);
    expect(await readdir(tenantDir)).toHaveLength(3);
  });

  it('one call reads at most its quota in all, and lists at most 10,000 entries in all: each is work on the shared main thread', async () => {
    const { run, cap, tenantDir } = await open({ workspace: { maxBytes: 1000 } });
    expect(await cap('workspace.write', { path: 'a.txt', content: 'x'.repeat(300) })).toMatchObject({ ok: true });
    const reads = (await run('many', { requests: Array.from({ length: 5 }, () => ({ name: 'workspace.read', argument: { path: 'a.txt' } })), digest: true })) as unknown as { value: { ok: boolean; error?: string }[] };
    expect(reads.value.filter((answer) => answer.ok)).toHaveLength(3);
    // A refusal reaches the plugin as the generic failure every capability refusal is.
    expect(reads.value.filter((answer) => !answer.ok).map((answer) => answer.error)).toEqual(Array(2).fill('capability workspace.read failed'));
    // The next call has its own allowance.
    expect(await cap('workspace.read', { path: 'a.txt' })).toMatchObject({ ok: true });

    await mkdir(join(tenantDir, 'many'));
    await Promise.all(Array.from({ length: 1000 }, (_, i) => writeFile(join(tenantDir, 'many', `f${i}`), '')));
    const lists = (await run('many', { requests: Array.from({ length: 11 }, () => ({ name: 'workspace.list', argument: { path: 'many' } })) })) as unknown as { value: { ok: boolean; error?: string }[] };
    expect(lists.value.filter((answer) => answer.ok).length).toBeLessThanOrEqual(10);
    expect(lists.value.find((answer) => !answer.ok)?.error).toBe('capability workspace.list failed');
    expect(await cap('workspace.list', { path: 'many' })).toMatchObject({ ok: true, value: { truncated: false } });
  });

  it('one call\'s writes count at most 100,000 entries of the folder in all for their quota checks: each is an lstat on the host', async () => {
    // Eleven walks of 9,000 lstats take seconds on a loaded machine: the call's deadline is no part of what is tested.
    const { run, cap, tenantDir } = await open({ workspace: { maxFiles: 10_000 }, limits: { timeoutMs: 60_000 } });
    await mkdir(join(tenantDir, 'bulk'), { recursive: true });
    await Promise.all(Array.from({ length: 9000 }, (_, i) => writeFile(join(tenantDir, 'bulk', `f${i}`), '')));
    // 16 at once (the capability channel's own bound on requests in flight); they run one after another.
    const answered = await run('many', { requests: Array.from({ length: 16 }, (_, i) => ({ name: 'workspace.write', argument: { path: `w${i}.txt`, content: 'x' } })) });
    expect(answered.isError, JSON.stringify(answered)).toBe(false);
    const writes = answered as unknown as { value: { ok: boolean; error?: string }[] };
    const written = writes.value.filter((answer) => answer.ok).length;
    // The n-th write counts 9,001 + n entries: eleven count 99,066, a twelfth would pass 100,000.
    expect(written).toBe(11);
    expect(writes.value.slice(written).every((answer) => answer.error === 'capability workspace.write failed')).toBe(true);
    expect(await cap('workspace.write', { path: 'next.txt', content: 'x' })).toMatchObject({ ok: true });
  }, 60_000);

  it('the host\'s caps stand above the manifest\'s', async () => {
    const { cap } = await open({ workspace: { maxBytes: 1_000_000 } }, { workspace: { dir: 'filled in by open', maxBytes: 10 } });
    expect(await cap('workspace.write', { path: 'a.txt', content: 'x'.repeat(11) })).toMatchObject({ ok: false });
  });

  it('a read-only grant holds only the functions it names', async () => {
    const { cap, run, tenantDir } = await open({ capabilities: ['workspace.read', 'workspace.list'] });
    expect(await run('names', {})).toMatchObject({ value: ['workspace.list', 'workspace.read'] });
    expect(await cap('workspace.write', { path: 'a.txt', content: 'x' })).toEqual({ ok: false, error: 'not granted' });
    expect(await readdir(tenantDir).catch(() => [])).toEqual([]);
  });

  it('keeps tenants apart, whatever their ids say', async () => {
    const { cap } = await open();
    await cap('workspace.write', { path: 'mine.txt', content: 'acme only' }, 'acme');
    for (const tenant of ['globex', '../acme', 'acme/..', '.', '..', 'ACME']) {
      expect(await cap('workspace.read', { path: 'mine.txt' }, tenant), tenant).toMatchObject({ ok: false });
      expect(await cap('workspace.read', { path: '../acme/mine.txt' }, tenant), tenant).toMatchObject({ ok: false });
    }
    expect((await readdir(workspace)).sort()).toEqual(['%2E', '%2E%2E', '%2E%2E%2Facme', 'ACME', 'acme', 'acme%2F%2E%2E', 'globex']);
  });

  it('a long id\'s hashed folder can never be claimed by another id that spells it', async () => {
    const { cap } = await open();
    const long = 'l'.repeat(200);
    await cap('workspace.write', { path: 'mine.txt', content: 'long tenant only' }, long);
    const hashed = basename(workspaceFolder(workspace, long));
    // The tenant whose id is the long id's folder name, as it was spelled before and as it is now.
    for (const tenant of [hashed, `tenant-${hashed.slice(1)}`]) {
      expect(await cap('workspace.read', { path: 'mine.txt' }, tenant), tenant).toMatchObject({ ok: false });
      expect(basename(workspaceFolder(workspace, tenant))).not.toBe(hashed);
    }
    // Lone surrogates, which UTF-8 would turn into the same replacement character, keep their own folders too.
    expect(workspaceFolder(workspace, `${'s'.repeat(130)}\ud800`)).not.toBe(workspaceFolder(workspace, `${'s'.repeat(130)}\udc00`));
    expect(workspaceFolder(workspace, '\ud800')).not.toBe(workspaceFolder(workspace, '\udc00'));
  });

  it('a host that does not configure a workspace does not load a plugin granted one', async () => {
    const dir = await pluginFolder('plugins/relay.js', { capabilities: ['workspace'] });
    const sandbox = createSandbox({ mode: 'in-process' });
    opened.push(sandbox);
    await expect(sandbox.loadPlugins([dir])).rejects.toThrow(/capabilities\.0 names "workspace", which this host does not offer/);
  });

  it('checks the manifest\'s workspace keys by path', async () => {
    const dir = await pluginFolder('plugins/relay.js', { capabilities: ['workspace'], workspace: { maxBytes: -1, maxFile: 3 } });
    const sandbox = createSandbox({ mode: 'in-process', workspace: base });
    opened.push(sandbox);
    const [report] = await sandbox.checkPlugins([dir]);
    expect(report!.problems.join('\n')).toMatch(/workspace: maxFile: unknown key \(did you mean "maxFiles"\?\)|workspace\.maxFile: unknown key/);
    expect(report!.problems.join('\n')).toContain('workspace.maxBytes must be at least 1');
  });
});
