// Benchmark metrics in github-action-benchmark's custom formats, and the regression check.
export type Direction = 'smaller' | 'bigger';

export interface Metric {
  readonly name: string;
  readonly unit: string;
  readonly value: number;
  readonly direction: Direction;
  /** Ratios against a baseline measured in the same run: what CI should gate on. */
  readonly ratio: boolean;
  readonly extra?: string;
}

/** One entry of a customSmallerIsBetter / customBiggerIsBetter array. */
export interface BenchmarkEntry {
  readonly name: string;
  readonly unit: string;
  readonly value: number;
  readonly extra?: string;
}

export function toEntries(metrics: readonly Metric[], direction: Direction): BenchmarkEntry[] {
  return metrics
    .filter((metric) => metric.direction === direction)
    .map((metric) => ({ name: metric.name, unit: metric.unit, value: round(metric.value), ...(metric.extra === undefined ? {} : { extra: metric.extra }) }));
}

export interface Regression {
  readonly name: string;
  readonly baseline: number;
  readonly current: number;
  readonly worseByPct: number;
}

/** Metrics that got worse than the baseline by more than maxPct percent. */
export function regressions(metrics: readonly Metric[], baseline: readonly BenchmarkEntry[], maxPct: number, gate: 'ratios' | 'all'): Regression[] {
  const previous = new Map(baseline.map((entry) => [entry.name, entry.value]));
  const found: Regression[] = [];
  for (const metric of metrics) {
    if (gate === 'ratios' && !metric.ratio) continue;
    const base = previous.get(metric.name);
    if (base === undefined || base <= 0) continue;
    const worseByPct = metric.direction === 'smaller' ? ((metric.value - base) / base) * 100 : ((base - metric.value) / base) * 100;
    if (worseByPct > maxPct) found.push({ name: metric.name, baseline: base, current: round(metric.value), worseByPct: round(worseByPct) });
  }
  return found;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
