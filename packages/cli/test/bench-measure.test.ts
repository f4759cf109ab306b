// Bench arithmetic that the figures rest on: the median of per-round ratios, and a ratio
// read from rounds of samples, one per round, robust to one bad round.
import { describe, expect, it } from 'vitest';
import { median, Rounds } from '../src/bench/measure.js';

describe('bench measure', () => {
  it('median: the middle value, or the mean of the two middle ones; order does not matter', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
  });

  it('a subject nobody measured is an error naming it, not a NaN', async () => {
    const rounds = await Rounds.run([{ name: 'a', iterations: 2, warmup: 0, body: () => undefined }], 1);
    expect(() => rounds.latency('b')).toThrow('nothing measured as b');
    expect(rounds.latency('a').samples).toBe(2);
  });

  it('one ratio per round, and samples of every round are counted', async () => {
    const rounds = await Rounds.run([
      { name: 'x', iterations: 3, warmup: 1, body: () => undefined },
      { name: 'y', iterations: 3, warmup: 1, body: () => undefined },
    ], 4);
    expect(rounds.ratios('x', 'y')).toHaveLength(4);
    expect(rounds.latency('x').samples).toBe(12);
  });

  it('idleBeforeMs: every iteration, warm-up included, starts after that much idleness, and the idleness is not in its sample', async () => {
    const gaps: number[] = [];
    let lastEnd: number | undefined;
    const rounds = await Rounds.run([{
      name: 'idle',
      iterations: 3,
      warmup: 1,
      idleBeforeMs: 20,
      body: () => {
        if (lastEnd !== undefined) gaps.push(performance.now() - lastEnd);
        lastEnd = performance.now();
      },
    }], 2);
    expect(gaps).toHaveLength(6);
    // Node's timers may fire up to a millisecond early.
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(19);
    // A sample times the body alone: below the pause it follows however slow the machine.
    expect(rounds.latency('idle').p99Us).toBeLessThan(Math.min(...gaps) * 1000);
  });
});
