// The kv capability (JSON per tenant and plugin, persisted in SQLite, capped) and the log
// capability (one bounded per-call log with the plugin's console), driven by a plugin that
// asks for whatever the test says.
import { createEngine, type JsonValue, type ToolResult } from '@airlock/core';
import { createSandbox, entryCharge, KV_ENTRY_OVERHEAD_BYTES, SqliteKvStore, type KvStore, type Sandbox, type SandboxOptions } from '@airlock/sandbox';
import { createRequire } from 'node:module';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pluginFolder } from './support/plugin-harness.js';

let base: string;
const opened: Sandbox[] = [];
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'airlock-kv-test-'));
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((sandbox) => sandbox.close()));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

async function open(options: SandboxOptions, manifest: Record<string, unknown> = {}) {
  const dir = await pluginFolder('plugins/relay.js', { capabilities: ['kv', 'log'], limits: { timeoutMs: 5000 }, ...manifest });
  const sandbox = createSandbox({ mode: 'in-process', threads: 2, ...options });
  opened.push(sandbox);
  await sandbox.loadPlugins([dir]);
  const engine = createEngine({ tools: sandbox.tools(), policy: { default: 'allow' } });
  const run = async (tool: string, args: JsonValue, tenant = 'acme'): Promise<ToolResult> => (await engine.run([{ id: 'c1', name: tool, arguments: JSON.stringify(args) }], { tenant }))[0]!;
  const cap = async (name: string, argument: JsonValue, tenant = 'acme') => (await run('cap', { name, argument }, tenant) as unknown as { value: { ok: boolean; value?: JsonValue; error?: string } }).value;
  return { sandbox, run, cap };
}

describe('kv capability', () => {
  it('keeps JSON values per tenant, and they outlive the sandbox in the SQLite file', async () => {
    const file = join(base, 'persist.sqlite');
    const first = await open({ kv: file }, { name: 'notes' });
    expect(await first.cap('kv.set', { key: 'todo', value: { items: ['milk', '€'], n: 2 } })).toEqual({ ok: true, value: { key: 'todo', bytes: 30 } });
    expect(await first.cap('kv.get', { key: 'todo' })).toEqual({ ok: true, value: { key: 'todo', exists: true, value: { items: ['milk', '€'], n: 2 } } });
    expect(await first.cap('kv.get', { key: 'todo' }, 'globex')).toEqual({ ok: true, value: { key: 'todo', exists: false } });
    await first.sandbox.close();
    const second = await open({ kv: file }, { name: 'notes' });
    expect(await second.cap('kv.get', { key: 'todo' })).toMatchObject({ ok: true, value: { exists: true, value: { n: 2 } } });
    expect(await second.cap('kv.list', { prefix: 'to' })).toEqual({ ok: true, value: { keys: ['todo'], truncated: false } });
    expect(await second.cap('kv.delete', { key: 'todo' })).toEqual({ ok: true, value: { key: 'todo', deleted: true } });
    expect(await second.cap('kv.get', { key: 'todo' })).toMatchObject({ value: { exists: false } });
  });

  it('never shows one plugin\'s keys to another plugin of the same tenant', async () => {
    const file = join(base, 'plugins.sqlite');
    const notes = await open({ kv: file }, { name: 'notes' });
    await notes.cap('kv.set', { key: 'token', value: 'notes-only' });
    const other = await open({ kv: file }, { name: 'other' });
    expect(await other.cap('kv.get', { key: 'token' })).toMatchObject({ value: { exists: false } });
    expect(await other.cap('kv.list', {})).toMatchObject({ value: { keys: [] } });
    expect(await other.cap('kv.delete', { key: 'token' })).toMatchObject({ value: { deleted: false } });
    expect(await notes.cap('kv.get', { key: 'token' })).toMatchObject({ value: { exists: true, value: 'notes-only' } });
  });

  it('lists by literal prefix: "%" and "_" are not wildcards', async () => {
    const { cap } = await open({ kv: join(base, 'prefix.sqlite') });
    for (const key of ['a%b', 'axb', 'a_c', 'abc']) await cap('kv.set', { key, value: 1 });
    expect(await cap('kv.list', { prefix: 'a%' })).toMatchObject({ value: { keys: ['a%b'] } });
    expect(await cap('kv.list', { prefix: 'a_' })).toMatchObject({ value: { keys: ['a_c'] } });
  });

  it('holds the size cap (manifest under host), charging each entry its tenant, plugin and a fixed overhead, counting a replaced value once, even against racing writes', async () => {
    const { cap, run } = await open({ kv: { file: join(base, 'cap.sqlite'), maxBytes: 1000 } }, { name: 'capped', kv: { maxBytes: 300 } });
    // An entry costs key + JSON value + tenant + plugin + 32: "a" = 60 x's is 1 + 62 + 4 + 6 + 32 = 105.
    expect(entryCharge({ tenant: 'acme', plugin: 'capped' }, 'a', JSON.stringify('x'.repeat(60)))).toBe(105);
    expect(KV_ENTRY_OVERHEAD_BYTES).toBe(32);
    expect(await cap('kv.set', { key: 'a', value: 'x'.repeat(60) })).toMatchObject({ ok: true });
    expect(await cap('kv.set', { key: 'b', value: 'x'.repeat(160) })).toMatchObject({ ok: false, error: 'capability kv.set failed' });
    expect(await cap('kv.set', { key: 'a', value: 'x'.repeat(200) })).toMatchObject({ ok: true });
    // Tiny entries are not free: "r0" = "y" costs 2 + 3 + 6 + 6 + 32 = 49, so six of ten racing sets fit in 300.
    const racing = await run('many', { requests: Array.from({ length: 10 }, (_, i) => ({ name: 'kv.set', argument: { key: `r${i}`, value: 'y' } })) }, 'globex');
    expect((racing as unknown as { value: { ok: boolean }[] }).value.filter((answer) => answer.ok)).toHaveLength(6);
    // A delete gives its bytes back.
    expect(await cap('kv.delete', { key: 'r0' }, 'globex')).toMatchObject({ value: { deleted: true } });
    expect(await cap('kv.set', { key: 'r9', value: 'y' }, 'globex')).toMatchObject({ ok: true });
    expect(await cap('kv.set', { key: 'r8', value: 'y' }, 'globex')).toMatchObject({ ok: false });
  });

  it('caps what one call writes in all at its quota, overwriting one key included; the next call writes again', async () => {
    const { run, cap } = await open({ kv: { file: join(base, 'written.sqlite'), maxBytes: 1000 } }, { name: 'writer', kv: { maxBytes: 300 } });
    // Each write is "a" + 102 bytes of JSON: two fit in 300, the third does not, though the namespace holds one entry.
    const writes = await run('many', { requests: Array.from({ length: 10 }, () => ({ name: 'kv.set', argument: { key: 'a', value: 'x'.repeat(100) } })) });
    expect((writes as unknown as { value: { ok: boolean }[] }).value.map((answer) => answer.ok)).toEqual([true, true, false, false, false, false, false, false, false, false]);
    expect(await cap('kv.set', { key: 'a', value: 'y' })).toMatchObject({ ok: true });
  });

  it('caps what one call reads in all at its quota; the next call reads again', async () => {
    const { run, cap } = await open({ kv: { file: join(base, 'read.sqlite'), maxBytes: 1000 } }, { name: 'reader', kv: { maxBytes: 300 } });
    expect(await cap('kv.set', { key: 'a', value: 'x'.repeat(100) })).toMatchObject({ ok: true });
    const reads = await run('many', { requests: Array.from({ length: 5 }, () => ({ name: 'kv.get', argument: { key: 'a' } })) });
    expect((reads as unknown as { value: { ok: boolean }[] }).value.map((answer) => answer.ok)).toEqual([true, true, false, false, false]);
    expect(await cap('kv.get', { key: 'a' })).toMatchObject({ ok: true, value: { exists: true } });
    // Listing keys reads too: "a" and 100 k's are 101 bytes a list.
    expect(await cap('kv.set', { key: 'k'.repeat(100), value: 1 })).toMatchObject({ ok: true });
    const lists = await run('many', { requests: Array.from({ length: 5 }, () => ({ name: 'kv.list', argument: {} })) });
    expect((lists as unknown as { value: { ok: boolean }[] }).value.map((answer) => answer.ok)).toEqual([true, true, false, false, false]);
  });

  it('reads a call\'s requests asked all at once one after another, so none past the quota reaches the store', async () => {
    const value = JSON.stringify('x'.repeat(100));
    let reads = 0;
    const store: KvStore = {
      get: () => ((reads += 1), value),
      set: () => true,
      delete: () => false,
      list: () => [],
    };
    // Process mode: the requests reach the host in one batch, handled in one turn.
    const { run } = await open({ kv: { store, maxBytes: 300 }, mode: 'process' }, { name: 'mine' });
    // Promise.all of ten: up to 16 requests are in flight at once, and all passed a check made before any read was counted.
    const answers = await run('many', { requests: Array.from({ length: 10 }, () => ({ name: 'kv.get', argument: { key: 'a' } })) });
    expect((answers as unknown as { value: { ok: boolean }[] }).value.filter((answer) => answer.ok)).toHaveLength(2);
    expect(reads).toBe(3);
  });

  it('caps the keys of a namespace (manifest under host), and keeps its usage across reopening', async () => {
    const file = join(base, 'keys.sqlite');
    const first = await open({ kv: { file, maxKeys: 1000 } }, { name: 'counted', kv: { maxKeys: 3 } });
    for (const key of ['a', 'b', 'c']) expect(await first.cap('kv.set', { key, value: 1 })).toMatchObject({ ok: true });
    expect(await first.cap('kv.set', { key: 'd', value: 1 })).toMatchObject({ ok: false, error: 'capability kv.set failed' });
    expect(await first.cap('kv.set', { key: 'a', value: 2 })).toMatchObject({ ok: true });
    expect(await first.cap('kv.set', { key: 'd', value: 1 }, 'globex')).toMatchObject({ ok: true });
    await first.sandbox.close();
    const second = await open({ kv: { file, maxKeys: 2 } }, { name: 'counted', kv: { maxKeys: 3 } });
    expect(await second.cap('kv.delete', { key: 'a' })).toMatchObject({ value: { deleted: true } });
    // Two keys left, and the host's cap of two is the one that holds.
    expect(await second.cap('kv.set', { key: 'd', value: 1 })).toMatchObject({ ok: false });
    expect(await second.cap('kv.delete', { key: 'b' })).toMatchObject({ value: { deleted: true } });
    expect(await second.cap('kv.set', { key: 'd', value: 1 })).toMatchObject({ ok: true });
  });

  it('counts the usage of a file written before the usage table existed', async () => {
    const file = join(base, 'old.sqlite');
    // The sandbox's own SQLite driver, as an older Airlock wrote the file.
    const Database = createRequire(new URL('../packages/sandbox/package.json', import.meta.url))('better-sqlite3') as new (file: string) => { exec(sql: string): void; prepare(sql: string): { run(...values: string[]): unknown }; close(): void };
    const old = new Database(file);
    old.exec('CREATE TABLE airlock_kv (tenant TEXT NOT NULL, plugin TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (tenant, plugin, key)) WITHOUT ROWID');
    old.prepare('INSERT INTO airlock_kv VALUES (?, ?, ?, ?)').run('acme', 'legacy', 'k', JSON.stringify('x'.repeat(100)));
    old.close();
    const store = new SqliteKvStore(file);
    const namespace = { tenant: 'acme', plugin: 'legacy' };
    const charged = entryCharge(namespace, 'k', JSON.stringify('x'.repeat(100)));
    expect(store.set(namespace, 'l', '1', charged + entryCharge(namespace, 'l', '1') - 1, 10)).toBe(false);
    expect(store.set(namespace, 'l', '1', charged + entryCharge(namespace, 'l', '1'), 10)).toBe(true);
    expect(store.set(namespace, 'm', '1', 100_000, 2)).toBe(false);
    store.close();
  });

  it('counts every request of a call in its metadata, refused ones too, and the JSON bytes that crossed each way', async () => {
    const { run } = await open({ kv: join(base, 'counts.sqlite') });
    const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');
    const requests = [
      { name: 'kv.set', argument: { key: 'k', value: { n: '€' } } },
      { name: 'kv.get', argument: { key: 'k' } },
      { name: 'log', argument: { level: 'info', message: 'hi' } },
    ];
    const result = await run('many', { requests });
    const answers = (result as unknown as { value: { ok: boolean; value?: JsonValue }[] }).value;
    expect(answers.every((answer) => answer.ok)).toBe(true);
    expect(result.metadata).toMatchObject({
      capabilityRequests: 3,
      capabilityBytesIn: requests.reduce((sum, request) => sum + bytes(request.argument), 0),
      capabilityBytesOut: answers.reduce((sum, answer) => sum + bytes(answer.value ?? null), 0),
    });
    // Twenty at once: at most sixteen may wait at the host, the rest are refused in the worker
    // (how many depends on how fast the host answers); all twenty count, and only what crossed
    // to the host counts in bytes. The refusals themselves are pinned in live-call.test.ts.
    const line = { level: 'info', message: 'hi' };
    const flood = await run('many', { requests: Array.from({ length: 20 }, () => ({ name: 'log', argument: line })) });
    const answered = (flood as unknown as { value: { ok: boolean }[] }).value.filter((answer) => answer.ok).length;
    expect(answered).toBeLessThanOrEqual(20);
    expect(answered).toBeGreaterThanOrEqual(16);
    expect(flood.metadata).toMatchObject({ capabilityRequests: 20, capabilityBytesIn: answered * bytes(line), capabilityBytesOut: answered * bytes(null) });
  });

  it('refuses hostile keys and arguments with a generic error', async () => {
    const { cap } = await open({ kv: join(base, 'hostile.sqlite') });
    for (const argument of [{ key: '' }, { key: 'a\u0000b' }, { key: 'k'.repeat(513) }, { key: 42 }, 'key', null, { key: 'k' }]) {
      expect(await cap('kv.set', argument as JsonValue), JSON.stringify(argument)).toEqual({ ok: false, error: 'capability kv.set failed' });
    }
  });

  it('runs over an embedder\'s store', async () => {
    const rows = new Map<string, string>();
    const id = (ns: { tenant: string; plugin: string }, key: string) => JSON.stringify([ns.tenant, ns.plugin, key]);
    const store: KvStore = {
      get: (ns, key) => rows.get(id(ns, key)),
      set: (ns, key, json) => (rows.set(id(ns, key), json), true),
      delete: (ns, key) => rows.delete(id(ns, key)),
      list: () => [],
    };
    const { cap } = await open({ kv: { store } }, { name: 'mine' });
    await cap('kv.set', { key: 'k', value: [1, 2] });
    expect([...rows]).toEqual([['["acme","mine","k"]', '[1,2]']]);
  });
});

describe('log capability', () => {
  it('lands in the call\'s one log with the console, bounded together', async () => {
    const { run } = await open({}, { capabilities: ['log'] });
    const result = await run('chatty', { lines: 2 });
    expect(result.metadata?.logs).toEqual([
      { level: 'info', message: 'from the console' },
      { level: 'warn', message: 'line 0 {"i":0}' },
      { level: 'warn', message: 'line 1 {"i":1}' },
    ]);
    expect(result.metadata).toMatchObject({ capabilityRequests: 2 });
    const flood = await run('chatty', { lines: 150 });
    expect(flood.metadata?.logs).toHaveLength(100);
    expect(flood.metadata?.logsDropped).toBe(51);
  });

  it('keeps console lines and log requests in the order the plugin emitted them', async () => {
    const { run } = await open({}, { capabilities: ['log'] });
    const result = await run('interleave', {});
    expect(result).toMatchObject({ isError: false, value: 'interleaved' });
    expect(result.metadata?.logs).toEqual([
      { level: 'info', message: 'one' },
      { level: 'info', message: 'two' },
      { level: 'warn', message: 'three' },
      { level: 'error', message: 'four {"n":4}' },
      { level: 'info', message: 'five' },
      { level: 'debug', message: 'six \u001b[2J' },
      { level: 'error', message: 'seven' },
    ]);
  });

  it('refuses a malformed log request in the plugin, and keeps no line of it', async () => {
    const { cap, run } = await open({}, { capabilities: ['log'] });
    for (const argument of [{ level: 'loud', message: 'x' }, { level: 'info' }, 'text', null]) {
      expect(await cap('log', argument as JsonValue), JSON.stringify(argument)).toEqual({ ok: false, error: 'capability log failed' });
    }
    const result = await run('cap', { name: 'log', argument: { level: 'info', message: 'm'.repeat(5000) } });
    expect((result.metadata?.logs as { message: string }[])[0]!.message).toHaveLength(2000 + '… (truncated)'.length);
  });
});
