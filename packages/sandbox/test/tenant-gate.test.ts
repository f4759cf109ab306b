// The per-tenant gate: waiters admitted in order, released on abort, and one abort
// listener per signal however many calls of a turn wait on it (no MaxListeners warning).
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { TenantGate } from '../src/plugin/tenant-gate.js';

describe('TenantGate', () => {
  it('thirty calls of one turn waiting on one tenant hold one abort listener, and none once admitted', async () => {
    const gate = new TenantGate(1);
    const turn = new AbortController();
    const first = await gate.acquire('t', turn.signal);
    const waiting = Array.from({ length: 30 }, () => gate.acquire('t', turn.signal));
    expect(getEventListeners(turn.signal, 'abort')).toHaveLength(1);
    let release = first;
    for (const next of waiting) {
      release();
      release = await next;
    }
    release();
    expect(getEventListeners(turn.signal, 'abort')).toHaveLength(0);
  });

  it('aborting the signal rejects every waiter of it and frees their places', async () => {
    const gate = new TenantGate(1);
    const turn = new AbortController();
    const other = new AbortController();
    const held = await gate.acquire('t', other.signal);
    const doomed = [gate.acquire('t', turn.signal), gate.acquire('t', turn.signal)];
    const survivor = gate.acquire('t', other.signal);
    turn.abort(new Error('cancelled'));
    for (const promise of doomed) await expect(promise).rejects.toThrow('cancelled');
    held();
    const admitted = await survivor;
    admitted();
    expect(getEventListeners(turn.signal, 'abort')).toHaveLength(0);
    expect(getEventListeners(other.signal, 'abort')).toHaveLength(0);
  });
});
