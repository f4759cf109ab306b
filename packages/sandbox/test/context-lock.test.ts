// The lock realm contexts are created under: a holder that died inside it (a terminated
// worker) does not stop every other worker from building realms for good.
import { describe, expect, it } from 'vitest';
import { CONTEXT_LOCK_BYTES, shareContextLock, withContextLock } from '../src/isolate/context-lock.js';

describe('context lock', () => {
  it('is released after the work, and taken over from a holder that never released it', () => {
    const buffer = new SharedArrayBuffer(CONTEXT_LOCK_BYTES);
    shareContextLock(buffer);
    const held = new Int32Array(buffer, 0, 1);
    expect(withContextLock(() => Atomics.load(held, 0))).not.toBe(0);
    expect(Atomics.load(held, 0)).toBe(0);
    // A worker terminated inside: held, and taken two seconds ago.
    Atomics.store(held, 0, 99);
    new BigInt64Array(buffer, 8, 1)[0] = BigInt(Date.now() - 2000);
    expect(withContextLock(() => 'built')).toBe('built');
    expect(Atomics.load(held, 0)).toBe(0);
  });
});
