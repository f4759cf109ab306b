// The kv capability's embedded default: one SQLite file (WAL), a row per tenant, plugin and
// key. Each namespace's usage (bytes charged and keys) is a row of its own, updated in the
// same immediate transaction as the write: the quota check reads one row instead of summing
// the namespace (which, over a million tiny keys, stalled the host's event loop for seconds),
// and two writers, even two processes on the same file, cannot both squeeze under the cap.
import Database from 'better-sqlite3';
import { entryCharge, type KvNamespace, type KvStore } from './kv-store.js';

interface Usage {
  bytes: number;
  keys: number;
}

export class SqliteKvStore implements KvStore {
  readonly #db: Database.Database;
  readonly #get: Database.Statement<[string, string, string], { value: string }>;
  readonly #usage: Database.Statement<[string, string], Usage>;
  readonly #setUsage: Database.Statement<[string, string, number, number]>;
  readonly #entry: Database.Statement<[string, string, string], { value: string }>;
  readonly #put: Database.Statement<[string, string, string, string]>;
  readonly #delete: Database.Statement<[string, string, string]>;
  readonly #list: Database.Statement<[string, string, string], { key: string }>;
  readonly #setAtomically: (namespace: KvNamespace, key: string, json: string, maxBytes: number, maxKeys: number) => boolean;
  readonly #deleteAtomically: (namespace: KvNamespace, key: string) => boolean;

  constructor(file: string) {
    this.#db = new Database(file);
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('busy_timeout = 5000');
    this.#db.transaction(() => {
      this.#db.exec('CREATE TABLE IF NOT EXISTS airlock_kv (tenant TEXT NOT NULL, plugin TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (tenant, plugin, key)) WITHOUT ROWID');
      const counted = this.#db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'airlock_kv_usage'").get() !== undefined;
      if (counted) return;
      this.#db.exec('CREATE TABLE airlock_kv_usage (tenant TEXT NOT NULL, plugin TEXT NOT NULL, bytes INTEGER NOT NULL, keys INTEGER NOT NULL, PRIMARY KEY (tenant, plugin)) WITHOUT ROWID');
      // A file written before the usage table existed: counted once, here, the way entryCharge counts.
      const insert = this.#db.prepare<[string, string, number, number]>('INSERT INTO airlock_kv_usage (tenant, plugin, bytes, keys) VALUES (?, ?, ?, ?)');
      const usage = new Map<string, { tenant: string; plugin: string } & Usage>();
      for (const row of this.#db.prepare('SELECT tenant, plugin, key, value FROM airlock_kv').iterate() as Iterable<{ tenant: string; plugin: string; key: string; value: string }>) {
        const id = JSON.stringify([row.tenant, row.plugin]);
        const entry = usage.get(id) ?? { tenant: row.tenant, plugin: row.plugin, bytes: 0, keys: 0 };
        entry.bytes += entryCharge(row, row.key, row.value);
        entry.keys += 1;
        usage.set(id, entry);
      }
      for (const entry of usage.values()) insert.run(entry.tenant, entry.plugin, entry.bytes, entry.keys);
    }).immediate();
    this.#get = this.#db.prepare('SELECT value FROM airlock_kv WHERE tenant = ? AND plugin = ? AND key = ?');
    this.#usage = this.#db.prepare('SELECT bytes, keys FROM airlock_kv_usage WHERE tenant = ? AND plugin = ?');
    this.#setUsage = this.#db.prepare('INSERT INTO airlock_kv_usage (tenant, plugin, bytes, keys) VALUES (?, ?, ?, ?) ON CONFLICT (tenant, plugin) DO UPDATE SET bytes = excluded.bytes, keys = excluded.keys');
    this.#entry = this.#db.prepare('SELECT value FROM airlock_kv WHERE tenant = ? AND plugin = ? AND key = ?');
    this.#put = this.#db.prepare('INSERT INTO airlock_kv (tenant, plugin, key, value) VALUES (?, ?, ?, ?) ON CONFLICT (tenant, plugin, key) DO UPDATE SET value = excluded.value');
    this.#delete = this.#db.prepare('DELETE FROM airlock_kv WHERE tenant = ? AND plugin = ? AND key = ?');
    // From the prefix on, in order, until a key stops matching: not LIKE, where "%" and "_" are wildcards.
    this.#list = this.#db.prepare('SELECT key FROM airlock_kv WHERE tenant = ? AND plugin = ? AND key >= ? ORDER BY key');
    this.#setAtomically = this.#db.transaction((namespace: KvNamespace, key: string, json: string, maxBytes: number, maxKeys: number): boolean => {
      const used = this.#usage.get(namespace.tenant, namespace.plugin) ?? { bytes: 0, keys: 0 };
      const replaced = this.#entry.get(namespace.tenant, namespace.plugin, key);
      const bytes = used.bytes - (replaced === undefined ? 0 : entryCharge(namespace, key, replaced.value)) + entryCharge(namespace, key, json);
      const keys = used.keys + (replaced === undefined ? 1 : 0);
      if (bytes > maxBytes || keys > maxKeys) return false;
      this.#put.run(namespace.tenant, namespace.plugin, key, json);
      this.#setUsage.run(namespace.tenant, namespace.plugin, bytes, keys);
      return true;
    }).immediate;
    this.#deleteAtomically = this.#db.transaction((namespace: KvNamespace, key: string): boolean => {
      const removed = this.#entry.get(namespace.tenant, namespace.plugin, key);
      if (removed === undefined) return false;
      const used = this.#usage.get(namespace.tenant, namespace.plugin) ?? { bytes: 0, keys: 0 };
      this.#delete.run(namespace.tenant, namespace.plugin, key);
      this.#setUsage.run(namespace.tenant, namespace.plugin, Math.max(0, used.bytes - entryCharge(namespace, key, removed.value)), Math.max(0, used.keys - 1));
      return true;
    }).immediate;
  }

  get(namespace: KvNamespace, key: string): string | undefined {
    return this.#get.get(namespace.tenant, namespace.plugin, key)?.value;
  }

  set(namespace: KvNamespace, key: string, json: string, maxBytes: number, maxKeys = Number.MAX_SAFE_INTEGER): boolean {
    return this.#setAtomically(namespace, key, json, maxBytes, maxKeys);
  }

  delete(namespace: KvNamespace, key: string): boolean {
    return this.#deleteAtomically(namespace, key);
  }

  list(namespace: KvNamespace, prefix: string, limit: number): string[] {
    const keys: string[] = [];
    for (const row of this.#list.iterate(namespace.tenant, namespace.plugin, prefix)) {
      if (!row.key.startsWith(prefix) || keys.length >= limit) break;
      keys.push(row.key);
    }
    return keys;
  }

  close(): void {
    this.#db.close();
  }
}
