// A sandbox process that dies with calls in flight: who the quarantine hears about. The calls
// in flight are blamed only when nothing more certain explains the death, so a neighbour
// whose call merely happened to be running is not struck for another tenant's doing.
import { describe, expect, it } from 'vitest';
import { blameForDeath } from '../src/host/death-blame.js';
import { MemoryOffenders, RECENT_MEMORY_MS } from '../src/host/memory-offenders.js';

const hoarder = { tenant: 'mallory', plugin: 'rope' };
const victim = { tenant: 'alice', plugin: 'notes' };
const zombie = { tenant: 'eve', plugin: 'sort' };
const quiet = { named: undefined, stillRunning: [], atMemoryCeiling: false, memoryOffenders: [], inFlight: [victim] };

describe('blame for a sandbox process death', () => {
  it('a kill at the memory ceiling just after another pair was answered MEMORY_LIMIT is shared with that pair: the lone neighbour in flight is not struck', () => {
    // A re-attack: five calls flattening 1 GiB ropes answered MEMORY_LIMIT, the kill half a
    // second later, only a neighbour's call in flight: it was struck (and three such, quarantined).
    expect(blameForDeath({ ...quiet, atMemoryCeiling: true, memoryOffenders: [hoarder] })).toEqual([victim, hoarder]);
    // Nor does a throwaway pair's MEMORY_LIMIT answer take the blame alone for memory another pair in flight holds.
    expect(blameForDeath({ ...quiet, inFlight: [victim, zombie], atMemoryCeiling: true, memoryOffenders: [hoarder, victim] })).toEqual([victim, zombie, hoarder]);
    // The offender alone in flight is struck for certain.
    expect(blameForDeath({ ...quiet, inFlight: [hoarder], atMemoryCeiling: true, memoryOffenders: [hoarder] })).toEqual([hoarder]);
  });

  it('recent MEMORY_LIMIT answers explain only a ceiling kill, not another death', () => {
    expect(blameForDeath({ ...quiet, memoryOffenders: [hoarder] })).toEqual([victim]);
  });

  it('a named culprit, then a killed isolate still running, come first; with nothing in flight and nobody named, nobody', () => {
    expect(blameForDeath({ ...quiet, named: zombie, atMemoryCeiling: true, memoryOffenders: [hoarder] })).toEqual([zombie]);
    expect(blameForDeath({ ...quiet, stillRunning: [zombie], atMemoryCeiling: true, memoryOffenders: [hoarder] })).toEqual([zombie]);
    expect(blameForDeath({ ...quiet, inFlight: [], atMemoryCeiling: true, memoryOffenders: [hoarder] })).toBeUndefined();
    expect(blameForDeath(quiet)).toEqual([victim]);
  });

  it('remembers a MEMORY_LIMIT answer for RECENT_MEMORY_MS, once per pair', () => {
    let now = 0;
    const offenders = new MemoryOffenders(() => now);
    offenders.answered(hoarder);
    offenders.answered(hoarder);
    expect(offenders.recent()).toEqual([hoarder]);
    now = RECENT_MEMORY_MS - 1;
    expect(offenders.recent()).toEqual([hoarder]);
    now = RECENT_MEMORY_MS;
    expect(offenders.recent()).toEqual([]);
  });
});
