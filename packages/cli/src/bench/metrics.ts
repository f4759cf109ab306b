// Benchmark metrics in github-action-benchmark's custom formats, and the regression check.
export type Direction = 'smaller' | 'bigger';

export interface Metric {
  readonly name: string;
  readonly unit: string;
  readonly value: number;
  readonly direction: Direction;
  /**
   * Gated by default and kept by `--metrics ratios`: ratios against a baseline measured in the
   * same run. False for absolute figures and for ratios noted "not gated by default".
   */
  readonly ratio: boolean;
  readonly extra?: string;
  /** A ratio's value in each round (its `value` is their median): what the gate reads its noise from. */
  readonly rounds?: readonly number[];
}

/** How a bench step reports one figure (suite.ts collects them). */
export type Emit = (name: string, unit: string, value: number, direction: Metric['direction'], ratio?: boolean, extra?: string, rounds?: readonly number[]) => void;

/** One entry of a customSmallerIsBetter / customBiggerIsBetter array. */
export interface BenchmarkEntry {
  readonly name: string;
  readonly unit: string;
  readonly value: number;
  /** "best..worst" over the rounds, for ratios (github-action-benchmark shows it as is). */
  readonly range?: string;
  readonly extra?: string;
}

export type MetricSet = 'ratios' | 'all';

export function toEntries(metrics: readonly Metric[], direction: Direction, only: MetricSet = 'all'): BenchmarkEntry[] {
  return metrics
    .filter((metric) => metric.direction === direction && (only === 'all' || metric.ratio))
    .map((metric) => {
      const spread = metric.rounds === undefined || metric.rounds.length === 0 ? undefined : { best: best(metric.rounds, metric.direction), worst: worst(metric.rounds, metric.direction) };
      return {
        name: metric.name,
        unit: metric.unit,
        value: round(metric.value),
        ...(spread === undefined ? {} : { range: `${round(spread.best)}..${round(spread.worst)}` }),
        ...(metric.extra === undefined ? {} : { extra: metric.extra }),
      };
    });
}

export interface Regression {
  readonly name: string;
  /** The values compared: the baseline's worst round (or its value) and this run's best round (or its value). */
  readonly baseline: number;
  readonly current: number;
  readonly worseByPct: number;
}

/**
 * Gated metrics that got worse than the baseline by more than maxPct percent. Where both
 * runs kept their rounds (ratios), only a run whose best round is worse than the
 * baseline's worst round counts: two runs of the same build overlap, a real regression
 * moves every round.
 */
/** How many of this run's gated metrics the baseline has: none means the gate compared nothing. */
export function comparable(metrics: readonly Metric[], baseline: readonly BenchmarkEntry[], gate: MetricSet): number {
  return metrics.filter((metric) => (gate === 'all' || metric.ratio)).length - uncompared(metrics, baseline, gate).length;
}

/** This run's gated metrics the baseline does not have: they pass the gate unseen. */
export function uncompared(metrics: readonly Metric[], baseline: readonly BenchmarkEntry[], gate: MetricSet): string[] {
  const names = new Set(baseline.filter((entry) => entry.value > 0).map((entry) => entry.name));
  return metrics.filter((metric) => (gate === 'all' || metric.ratio) && !names.has(metric.name)).map((metric) => metric.name);
}

export function regressions(metrics: readonly Metric[], baseline: readonly BenchmarkEntry[], maxPct: number, gate: MetricSet): Regression[] {
  const previous = new Map(baseline.map((entry) => [entry.name, entry]));
  const found: Regression[] = [];
  for (const metric of metrics) {
    if (gate === 'ratios' && !metric.ratio) continue;
    const entry = previous.get(metric.name);
    if (entry === undefined || !(entry.value > 0)) continue;
    const base = worstOfRange(entry.range, metric.direction) ?? entry.value;
    const current = metric.rounds !== undefined && metric.rounds.length > 0 ? best(metric.rounds, metric.direction) : metric.value;
    const worseByPct = metric.direction === 'smaller' ? ((current - base) / base) * 100 : ((base - current) / base) * 100;
    if (worseByPct > maxPct) found.push({ name: metric.name, baseline: round(base), current: round(current), worseByPct: round(worseByPct) });
  }
  return found;
}

function best(values: readonly number[], direction: Direction): number {
  return direction === 'smaller' ? Math.min(...values) : Math.max(...values);
}

function worst(values: readonly number[], direction: Direction): number {
  return direction === 'smaller' ? Math.max(...values) : Math.min(...values);
}

/** The two ends of a "best..worst" range of positive numbers; undefined when it is no such range. */
export function rangeEnds(range: unknown): [number, number] | undefined {
  const ends = typeof range === 'string' ? range.split('..').map((end) => (end.trim() === '' ? NaN : Number(end))) : [];
  return ends.length === 2 && ends.every((end) => Number.isFinite(end) && end > 0) ? (ends as [number, number]) : undefined;
}

/** The worse end of a "best..worst" range; undefined when absent or not ours. */
function worstOfRange(range: string | undefined, direction: Direction): number | undefined {
  const ends = rangeEnds(range);
  return ends === undefined ? undefined : worst(ends, direction);
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
