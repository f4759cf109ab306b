// Where the kv capability keeps its values. Every operation names its namespace (tenant and
// plugin), so a store cannot be asked for another pair's keys by accident. An embedder may
// implement this over Redis or their own database; SqliteKvStore is the embedded default.
/** One tenant's values for one plugin: nothing crosses between two namespaces. */
export interface KvNamespace {
  readonly tenant: string;
  readonly plugin: string;
}

export interface KvStore {
  /** The value's JSON text, or undefined when the key is absent. */
  get(namespace: KvNamespace, key: string): string | undefined | Promise<string | undefined>;
  /**
   * Stores the JSON text unless the namespace would then hold more than maxKeys keys, or its
   * entries, each charged entryCharge() bytes, would exceed maxBytes; answers false (and
   * stores nothing) in that case. Must be atomic with respect to other sets of the same
   * namespace, or the quota can be overrun.
   */
  set(namespace: KvNamespace, key: string, json: string, maxBytes: number, maxKeys: number): boolean | Promise<boolean>;
  /** True when the key existed. */
  delete(namespace: KvNamespace, key: string): boolean | Promise<boolean>;
  /** Keys starting with prefix, in ascending order, at most limit of them. */
  list(namespace: KvNamespace, prefix: string, limit: number): readonly string[] | Promise<readonly string[]>;
  close?(): void | Promise<void>;
}

/** Charged per entry on top of its text: what a row costs on disk beyond key and value (index, row header). */
export const KV_ENTRY_OVERHEAD_BYTES = 32;

/**
 * The bytes one entry counts against maxBytes: key and value in UTF-8, plus the tenant and
 * plugin every row repeats and a fixed overhead, so a million one-byte entries cost what they
 * take on disk rather than next to nothing.
 */
export function entryCharge(namespace: KvNamespace, key: string, json: string): number {
  return Buffer.byteLength(key, 'utf8') + Buffer.byteLength(json, 'utf8') + Buffer.byteLength(namespace.tenant, 'utf8') + Buffer.byteLength(namespace.plugin, 'utf8') + KV_ENTRY_OVERHEAD_BYTES;
}
