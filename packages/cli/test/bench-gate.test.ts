// The bench gate: ratios carry their per-round range; a run regressed only when its best
// round is worse than the baseline's worst round by more than the threshold.
import { describe, expect, it } from 'vitest';
import { comparable, regressions, toEntries, uncompared, type Metric } from '../src/bench/metrics.js';

const ratio = (name: string, rounds: number[], direction: Metric['direction'] = 'smaller'): Metric => ({
  name,
  unit: 'x',
  value: [...rounds].sort((a, b) => a - b)[Math.floor(rounds.length / 2)] as number,
  direction,
  ratio: true,
  rounds,
});

describe('bench gate', () => {
  it('records each ratio\'s rounds as a "best..worst" range in the github-action-benchmark entry', () => {
    expect(toEntries([ratio('a_ratio', [3, 1, 2])], 'smaller')).toEqual([{ name: 'a_ratio', unit: 'x', value: 2, range: '1..3' }]);
    expect(toEntries([ratio('b_ratio', [3, 1, 2], 'bigger')], 'bigger')).toEqual([{ name: 'b_ratio', unit: 'x', value: 2, range: '3..1' }]);
  });

  it('--metrics ratios leaves absolute figures out', () => {
    const absolute: Metric = { name: 'x_p50', unit: 'µs', value: 5, direction: 'smaller', ratio: false };
    expect(toEntries([absolute, ratio('a_ratio', [1])], 'smaller', 'ratios').map((entry) => entry.name)).toEqual(['a_ratio']);
  });

  it('a baseline with none of the run\'s gated metrics compares nothing, and says so (the command exits 2)', () => {
    const run = [ratio('warm_ratio', [11, 12])];
    expect(comparable(run, [], 'ratios')).toBe(0);
    expect(comparable(run, [{ name: 'other_ratio', unit: 'x', value: 1 }], 'ratios')).toBe(0);
    expect(comparable(run, toEntries(run, 'smaller'), 'ratios')).toBe(1);
    // In part (only one of the two files): the ones left out are named, never passed silently.
    const both = [ratio('warm_ratio', [11, 12]), ratio('batch_ratio', [0.2], 'bigger')];
    expect(uncompared(both, toEntries(both, 'bigger'), 'ratios')).toEqual(['warm_ratio']);
  });

  it('overlapping runs of one build pass, even when their medians differ by far more than the threshold', () => {
    const baseline = toEntries([ratio('warm_ratio', [16, 18, 23, 25, 31])], 'smaller');
    expect(regressions([ratio('warm_ratio', [11, 15, 30, 34, 35])], baseline, 25, 'ratios')).toEqual([]);
  });

  it('a run whose every round is worse than the baseline\'s worst by more than the threshold regressed', () => {
    const baseline = [...toEntries([ratio('warm_ratio', [16, 18, 20])], 'smaller'), ...toEntries([ratio('batch_ratio', [0.5, 0.6, 0.7], 'bigger')], 'bigger')];
    const found = regressions([ratio('warm_ratio', [26, 27, 40]), ratio('batch_ratio', [0.2, 0.3, 0.35], 'bigger')], baseline, 25, 'ratios');
    expect(found).toEqual([
      { name: 'warm_ratio', baseline: 20, current: 26, worseByPct: 30 },
      { name: 'batch_ratio', baseline: 0.5, current: 0.35, worseByPct: 30 },
    ]);
  });

  it('a baseline without ranges (an older --json) is compared by value; absolute figures only with --gate all', () => {
    const slow: Metric = { name: 'x_p50', unit: 'µs', value: 300, direction: 'smaller', ratio: false };
    const baseline = [{ name: 'warm_ratio', unit: 'x', value: 10 }, { name: 'x_p50', unit: 'µs', value: 100 }];
    expect(regressions([ratio('warm_ratio', [13, 14]), slow], baseline, 25, 'ratios').map((found) => found.name)).toEqual(['warm_ratio']);
    expect(regressions([ratio('warm_ratio', [11, 12]), slow], baseline, 25, 'all').map((found) => found.name)).toEqual(['x_p50']);
  });

  it('a range that is not ours falls back to the value', () => {
    const baseline = [{ name: 'warm_ratio', unit: 'x', value: 10, range: '± 3' }];
    expect(regressions([ratio('warm_ratio', [13, 14])], baseline, 25, 'ratios').map((found) => found.name)).toEqual(['warm_ratio']);
  });

  it('a ratio noted "not gated by default" (ratio: false, its rounds kept) is left out by --metrics ratios and gated only by --gate all', () => {
    const jumpy: Metric = { ...ratio('warm_vs_raw_pool_ratio', [17, 18]), ratio: false };
    const baseline = toEntries([ratio('warm_vs_raw_pool_ratio', [6, 7])], 'smaller');
    expect(toEntries([jumpy], 'smaller', 'ratios')).toEqual([]);
    expect(toEntries([jumpy], 'smaller')).toEqual([{ name: 'warm_vs_raw_pool_ratio', unit: 'x', value: 18, range: '17..18' }]);
    expect(regressions([jumpy], baseline, 25, 'ratios')).toEqual([]);
    expect(regressions([jumpy], baseline, 25, 'all').map((found) => found.name)).toEqual(['warm_vs_raw_pool_ratio']);
  });
});
