// structuredClone: @ungap/structured-clone's serialize/deserialize (plain data, Date,
// RegExp, Map, Set, Error, BigInt, ArrayBuffer, typed arrays and DataView, cycles and
// shared references), with the standard's DataCloneError for what cannot be cloned.
import { deserialize, serialize } from '@ungap/structured-clone';
import { DOMException } from './captured.js';

export function structuredClone(value: unknown, options?: unknown): unknown {
  if (arguments.length === 0) throw new TypeError("Failed to execute 'structuredClone': 1 argument required, but only 0 present.");
  if (options !== undefined && options !== null && typeof options === 'object') {
    const transfer = (options as { transfer?: unknown }).transfer;
    if (transfer !== undefined && !(Array.isArray(transfer) && transfer.length === 0)) throw new DOMException('transferring is not supported in the sandbox', 'DataCloneError');
  }
  let records: ReturnType<typeof serialize>;
  try {
    records = serialize(value);
  } catch (error) {
    // The library's strict mode refuses functions and symbols with a TypeError: the standard says DataCloneError.
    if (error instanceof TypeError) throw new DOMException(`${error.message}: the value could not be cloned`, 'DataCloneError');
    throw error;
  }
  return deserialize(records);
}
