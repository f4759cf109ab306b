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
   * Stores the JSON text unless the namespace's keys and values, in UTF-8 bytes, would then
   * exceed maxBytes; answers false (and stores nothing) in that case. Must be atomic with
   * respect to other sets of the same namespace, or the quota can be overrun.
   */
  set(namespace: KvNamespace, key: string, json: string, maxBytes: number): boolean | Promise<boolean>;
  /** True when the key existed. */
  delete(namespace: KvNamespace, key: string): boolean | Promise<boolean>;
  /** Keys starting with prefix, in ascending order, at most limit of them. */
  list(namespace: KvNamespace, prefix: string, limit: number): readonly string[] | Promise<readonly string[]>;
  close?(): void | Promise<void>;
}
