// Which sandbox process (shard) a tenant's calls run in: a stable hash of the tenant, so
// a tenant always lands on the same shard and an abort there costs only that shard's calls.

/** FNV-1a over the UTF-16 code units of the tenant id, reduced to a shard index. */
export function shardOf(tenant: string, shards: number): number {
  if (shards <= 1) return 0;
  let hash = 0x811c9dc5;
  for (let i = 0; i < tenant.length; i += 1) {
    hash ^= tenant.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
}
