// The bench's raw process-pool baseline survives its child's death: the call is run again on a
// new child, a few times at most; any other failure, and a child that keeps dying, fail the bench.
import { describe, expect, it } from 'vitest';
import { respawning, type ProcessPool } from '../src/bench/respawning-pool.js';

const death = (): Error => new Error('the raw process-pool baseline exited (SIGSEGV)');

/** Pools whose run fails as `failures` says, one entry per pool opened (undefined: answers). */
function pools(failures: readonly (Error | undefined)[]) {
  let opened = 0;
  const open = async (): Promise<ProcessPool> => {
    const failure = failures[opened];
    opened += 1;
    return { run: async () => { if (failure !== undefined) throw failure; return 'ok'; }, close: async () => undefined };
  };
  return { open, opened: () => opened };
}

describe('respawning', () => {
  it('runs the call again on a new child when the child died, and once for calls in flight together', async () => {
    const { open, opened } = pools([death(), undefined]);
    const pool = await respawning(open);
    expect(await Promise.all([pool.run(), pool.run(), pool.run()])).toEqual(['ok', 'ok', 'ok']);
    expect(opened()).toBe(2);
  });

  it('fails on any other error, and on a child that keeps dying', async () => {
    await expect((await respawning(pools([new Error('bad answer')]).open)).run()).rejects.toThrow('bad answer');
    const dying = pools([death(), death(), death(), death(), death()]);
    await expect((await respawning(dying.open)).run()).rejects.toThrow('SIGSEGV');
    expect(dying.opened()).toBe(4);
  });
});
