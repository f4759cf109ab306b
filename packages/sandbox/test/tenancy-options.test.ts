// Every tenancy option of createSandbox is checked: a bad value or unknown key is an
// INVALID_OPTION error naming its path; the replaced per-tenant cap says what replaced it.
import { describe, expect, it } from 'vitest';
import { createSandbox, type SandboxOptions } from '../src/index.js';

const rejects = (options: unknown): string => {
  try {
    createSandbox(options as SandboxOptions);
  } catch (error) {
    expect((error as { code?: string }).code).toBe('INVALID_OPTION');
    return (error as Error).message;
  }
  throw new Error('expected createSandbox to refuse these options');
};

describe('tenancy options', () => {
  it.each([
    [{ processes: 0 }, 'options.processes must be an integer from 1 to 64'],
    [{ processes: 1.5 }, 'options.processes must be an integer'],
    [{ processes: '2' }, 'options.processes must be an integer'],
    [{ mode: 'in-process', processes: 2 }, 'options.processes applies to process mode only'],
    [{ fairShare: [] }, 'options.fairShare must be an object'],
    [{ fairShare: { weight: {} } }, 'options.fairShare.weight is not an option (expected weights, reserveThreads, claimMs)'],
    [{ fairShare: { weights: { gold: 0 } } }, 'options.fairShare.weights["gold"] must be a number above 0'],
    [{ fairShare: { weights: { gold: Number.POSITIVE_INFINITY } } }, 'options.fairShare.weights["gold"]'],
    [{ fairShare: { weights: { gold: '3' } } }, 'options.fairShare.weights["gold"]'],
    [{ fairShare: { weights: null } }, 'options.fairShare.weights must be an object'],
    [{ fairShare: { reserveThreads: -1 } }, 'options.fairShare.reserveThreads must be an integer from 0 to 16'],
    [{ fairShare: { claimMs: 1.5 } }, 'options.fairShare.claimMs must be an integer from 0 to 1000'],
    [{ quarantine: { crashes: 0 } }, 'options.quarantine.crashes must be an integer from 1 to 100'],
    [{ quarantine: { windowMs: 'long' } }, 'options.quarantine.windowMs must be an integer'],
    [{ quarantine: { baseMs: 60_000, maxMs: 1000 } }, 'options.quarantine.baseMs must not exceed options.quarantine.maxMs'],
    [{ quarantine: { strikes: 3 } }, 'options.quarantine.strikes is not an option'],
    [{ maxConcurrentPerTenant: 2 }, 'options.maxConcurrentPerTenant was replaced by work-conserving fair share'],
  ])('%j is refused: %s', (options, message) => {
    expect(rejects(options)).toContain(message);
  });

  it('accepts good values and places each tenant on a stable shard', async () => {
    const sandbox = createSandbox({ processes: 3, fairShare: { weights: { gold: 4 }, reserveThreads: 0 }, quarantine: { crashes: 2, windowMs: 1000, baseMs: 10, maxMs: 100 } });
    const shards = ['a', 'b', 'c', 'd', 'e', 'f'].map((tenant) => sandbox.shardOf(tenant));
    expect(shards.every((shard) => shard >= 0 && shard < 3)).toBe(true);
    expect(['a', 'b', 'c', 'd', 'e', 'f'].map((tenant) => sandbox.shardOf(tenant))).toEqual(shards);
    expect(new Set(Array.from({ length: 50 }, (_, i) => sandbox.shardOf(`t${i}`))).size).toBe(3);
    await sandbox.close();
  });
});
