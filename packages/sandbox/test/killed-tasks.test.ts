// Whose kill may still be running when a sandbox process dies: each kill counted on its own,
// whichever of its answer and its settle arrives first.
import { describe, expect, it } from 'vitest';
import { KILLED_RUNNING_MS, KilledTasks } from '../src/host/killed-tasks.js';

const mallory = { tenant: 'mallory', plugin: 'p' };
const victim = { tenant: 'victim', plugin: 'p' };

function clocked(): { killed: KilledTasks; advance: (ms: number) => void } {
  let now = 0;
  return { killed: new KilledTasks(() => now), advance: (ms) => (now += ms) };
}

describe('KilledTasks', () => {
  it('a kill is running from its answer until its settle', () => {
    const { killed } = clocked();
    killed.answered(victim);
    expect(killed.stillRunning()).toEqual([victim]);
    killed.settled(victim);
    expect(killed.stillRunning()).toEqual([]);
  });

  it('a settle that arrives before its answer settles that kill: nothing is left running', () => {
    const { killed } = clocked();
    killed.settled(victim);
    killed.answered(victim);
    expect(killed.stillRunning()).toEqual([]);
  });

  it('an old kill never covers for a new one: each counts from its own answer', () => {
    const { killed, advance } = clocked();
    killed.answered(mallory);
    advance(KILLED_RUNNING_MS + 200);
    killed.answered(mallory);
    expect(killed.stillRunning()).toEqual([mallory]);
    killed.settled(mallory);
    expect(killed.stillRunning()).toEqual([]);
  });

  it('a kill whose settle never came stops counting after the window (the zombie report covers longer runs)', () => {
    const { killed, advance } = clocked();
    killed.answered(victim);
    advance(KILLED_RUNNING_MS);
    expect(killed.stillRunning()).toEqual([]);
  });

  it('two kills of one pair need two settles', () => {
    const { killed } = clocked();
    killed.answered(mallory);
    killed.answered(mallory);
    killed.settled(mallory);
    expect(killed.stillRunning()).toEqual([mallory]);
    killed.settled(mallory);
    expect(killed.stillRunning()).toEqual([]);
  });
});
