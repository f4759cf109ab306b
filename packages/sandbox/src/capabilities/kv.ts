// The kv capability: JSON values per tenant and plugin. The namespace comes from the call's
// context, never from the plugin's argument, so no argument can reach another pair's keys.
import { snapshotJson, type JsonValue } from '@airlock/core';
import type { Capability, CapabilityContext } from '../plugin/capability-handler.js';
import { argumentObject, CapabilityRefusal, hasInvisible, optionalStringField, stringField } from './capability-argument.js';
import type { KvNamespace, KvStore } from './kv-store.js';

export const KV_FUNCTIONS = ['kv.get', 'kv.set', 'kv.delete', 'kv.list'] as const;
/** Host cap when the embedder names none: keys and values of one tenant+plugin, in UTF-8 bytes. */
export const DEFAULT_KV_MAX_BYTES = 10 * 1024 * 1024;
/** Host cap on keys of one tenant+plugin when the embedder names none. */
export const DEFAULT_KV_MAX_KEYS = 10_000;
export const MAX_KEY_BYTES = 512;
const MAX_LIST_KEYS = 1000;

/**
 * UTF-8 bytes each call has written, and read. Overwriting one key never grows the namespace,
 * so the quota alone let a call write 0.9 MiB a thousand times, each a synchronous SQLite
 * transaction on the embedder's main thread (an outside attack: a neighbour's calls waited
 * up to 100 ms, the event loop 252 ms), and reading one key 400 times did the same. A call
 * may write its namespace's quota in all, and read it in all (values got, keys listed).
 */
const writtenBy = new WeakMap<CapabilityContext, number>();
const readBy = new WeakMap<CapabilityContext, number>();
/** One call's reads run one after another: each is counted before the next is checked (16 at once all passed the check). */
const readsOf = new WeakMap<CapabilityContext, Promise<unknown>>();

function inTurn<T>(context: CapabilityContext, read: () => Promise<T>): Promise<T> {
  const next = (readsOf.get(context) ?? Promise.resolve()).then(read);
  readsOf.set(context, next.catch(() => undefined));
  return next;
}

function keyOf(key: string, name: string, allowEmpty = false): string {
  if (key.length === 0 && !allowEmpty) throw new CapabilityRefusal(`${name}: key must not be empty`);
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) throw new CapabilityRefusal(`${name}: key longer than ${MAX_KEY_BYTES} bytes`);
  if (hasInvisible(key)) throw new CapabilityRefusal(`${name}: key contains control characters`);
  return key;
}

/** The four kv functions over a store; `limitsOf` gives a plugin's manifest caps, applied under the host's. */
export function kvCapabilities(store: KvStore, host: { readonly maxBytes: number; readonly maxKeys: number }, limitsOf: (plugin: string) => { readonly maxBytes?: number | undefined; readonly maxKeys?: number | undefined } | undefined): Record<(typeof KV_FUNCTIONS)[number], Capability> {
  const namespace = (context: CapabilityContext): KvNamespace => ({ tenant: context.tenant, plugin: context.plugin });
  const quotaOf = (context: CapabilityContext): { readonly maxBytes: number; readonly maxKeys: number } => {
    const limits = limitsOf(context.plugin);
    return { maxBytes: Math.min(limits?.maxBytes ?? host.maxBytes, host.maxBytes), maxKeys: Math.min(limits?.maxKeys ?? host.maxKeys, host.maxKeys) };
  };
  const readRefusal = (context: CapabilityContext, name: string): CapabilityRefusal => new CapabilityRefusal(`${name}: this call has read more than its quota (${quotaOf(context).maxBytes} bytes) in all`);
  const checkRead = (context: CapabilityContext, name: string): void => {
    if ((readBy.get(context) ?? 0) >= quotaOf(context).maxBytes) throw readRefusal(context, name);
  };
  const countRead = (context: CapabilityContext, name: string, bytes: number): void => {
    const read = (readBy.get(context) ?? 0) + bytes;
    readBy.set(context, read);
    if (read > quotaOf(context).maxBytes) throw readRefusal(context, name);
  };
  return {
    'kv.get': (argument, context) => {
      const key = keyOf(stringField(argumentObject(argument, 'kv.get'), 'key', 'kv.get'), 'kv.get');
      return inTurn(context, async () => {
        checkRead(context, 'kv.get');
        const json = await store.get(namespace(context), key);
        countRead(context, 'kv.get', Buffer.byteLength(key, 'utf8') + (json === undefined ? 0 : Buffer.byteLength(json, 'utf8')));
        return json === undefined ? { key, exists: false } : { key, exists: true, value: JSON.parse(json) as JsonValue };
      });
    },
    'kv.set': async (argument, context) => {
      const object = argumentObject(argument, 'kv.set');
      const key = keyOf(stringField(object, 'key', 'kv.set'), 'kv.set');
      if (!Object.hasOwn(object, 'value')) throw new CapabilityRefusal('kv.set: value is required');
      const json = JSON.stringify(snapshotJson(object.value as JsonValue, { label: 'kv.set value' }));
      const { maxBytes, maxKeys } = quotaOf(context);
      const written = (writtenBy.get(context) ?? 0) + Buffer.byteLength(key, 'utf8') + Buffer.byteLength(json, 'utf8');
      writtenBy.set(context, written);
      if (written > maxBytes) throw new CapabilityRefusal(`kv.set: this call has written more than its quota (${maxBytes} bytes) in all`);
      if (!(await store.set(namespace(context), key, json, maxBytes, maxKeys))) throw new CapabilityRefusal('kv quota exceeded');
      return { key, bytes: Buffer.byteLength(json, 'utf8') };
    },
    'kv.delete': async (argument, context) => {
      const key = keyOf(stringField(argumentObject(argument, 'kv.delete'), 'key', 'kv.delete'), 'kv.delete');
      return { key, deleted: await store.delete(namespace(context), key) };
    },
    'kv.list': (argument, context) => {
      const object = argument === null || argument === undefined ? {} : argumentObject(argument, 'kv.list');
      const prefix = keyOf(optionalStringField(object, 'prefix', 'kv.list') ?? '', 'kv.list', true);
      return inTurn(context, async () => {
        checkRead(context, 'kv.list');
        const keys = await store.list(namespace(context), prefix, MAX_LIST_KEYS + 1);
        countRead(context, 'kv.list', keys.reduce((bytes, key) => bytes + Buffer.byteLength(key, 'utf8'), 0));
        return { keys: keys.slice(0, MAX_LIST_KEYS), truncated: keys.length > MAX_LIST_KEYS };
      });
    },
  };
}
