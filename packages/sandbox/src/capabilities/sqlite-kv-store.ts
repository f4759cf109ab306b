// The kv capability's embedded default: one SQLite file (WAL), a row per tenant, plugin and
// key. The quota check and the write run in one immediate transaction, so two writers,
// even two processes on the same file, cannot both squeeze under the cap.
import Database from 'better-sqlite3';
import type { KvNamespace, KvStore } from './kv-store.js';

export class SqliteKvStore implements KvStore {
  readonly #db: Database.Database;
  readonly #get: Database.Statement<[string, string, string], { value: string }>;
  readonly #usage: Database.Statement<[string, string], { bytes: number | null }>;
  readonly #entry: Database.Statement<[string, string, string], { bytes: number }>;
  readonly #put: Database.Statement<[string, string, string, string]>;
  readonly #delete: Database.Statement<[string, string, string]>;
  readonly #list: Database.Statement<[string, string, string], { key: string }>;
  readonly #setAtomically: (namespace: KvNamespace, key: string, json: string, maxBytes: number) => boolean;

  constructor(file: string) {
    this.#db = new Database(file);
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('busy_timeout = 5000');
    this.#db.exec('CREATE TABLE IF NOT EXISTS airlock_kv (tenant TEXT NOT NULL, plugin TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (tenant, plugin, key)) WITHOUT ROWID');
    this.#get = this.#db.prepare('SELECT value FROM airlock_kv WHERE tenant = ? AND plugin = ? AND key = ?');
    // CAST AS BLOB: length() of text counts characters; quotas are in UTF-8 bytes.
    this.#usage = this.#db.prepare('SELECT SUM(length(CAST(key AS BLOB)) + length(CAST(value AS BLOB))) AS bytes FROM airlock_kv WHERE tenant = ? AND plugin = ?');
    this.#entry = this.#db.prepare('SELECT length(CAST(key AS BLOB)) + length(CAST(value AS BLOB)) AS bytes FROM airlock_kv WHERE tenant = ? AND plugin = ? AND key = ?');
    this.#put = this.#db.prepare('INSERT INTO airlock_kv (tenant, plugin, key, value) VALUES (?, ?, ?, ?) ON CONFLICT (tenant, plugin, key) DO UPDATE SET value = excluded.value');
    this.#delete = this.#db.prepare('DELETE FROM airlock_kv WHERE tenant = ? AND plugin = ? AND key = ?');
    // From the prefix on, in order, until a key stops matching: not LIKE, where "%" and "_" are wildcards.
    this.#list = this.#db.prepare('SELECT key FROM airlock_kv WHERE tenant = ? AND plugin = ? AND key >= ? ORDER BY key');
    this.#setAtomically = this.#db.transaction((namespace: KvNamespace, key: string, json: string, maxBytes: number): boolean => {
      const used = this.#usage.get(namespace.tenant, namespace.plugin)?.bytes ?? 0;
      const replaced = this.#entry.get(namespace.tenant, namespace.plugin, key)?.bytes ?? 0;
      if (used - replaced + Buffer.byteLength(key, 'utf8') + Buffer.byteLength(json, 'utf8') > maxBytes) return false;
      this.#put.run(namespace.tenant, namespace.plugin, key, json);
      return true;
    }).immediate;
  }

  get(namespace: KvNamespace, key: string): string | undefined {
    return this.#get.get(namespace.tenant, namespace.plugin, key)?.value;
  }

  set(namespace: KvNamespace, key: string, json: string, maxBytes: number): boolean {
    return this.#setAtomically(namespace, key, json, maxBytes);
  }

  delete(namespace: KvNamespace, key: string): boolean {
    return this.#delete.run(namespace.tenant, namespace.plugin, key).changes > 0;
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
