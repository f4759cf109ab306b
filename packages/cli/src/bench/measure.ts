// Timing helpers for benchmarks (never for tests): per-iteration samples, percentiles,
// and rounds that interleave the set-ups so load from outside hits them alike.
import { setTimeout as pause } from 'node:timers/promises';

/** Rounds of every interleaved measurement: enough for a median that ignores two bad rounds. */
export const ROUNDS = 5;

/** Each subject's iterations in a round are split into this many slices, taken in turns. */
const SLICES_PER_ROUND = 10;

/** Latency in µs: the median and the 99th percentile of every sample taken. */
export interface Latency {
  readonly p50Us: number;
  readonly p99Us: number;
  readonly samples: number;
}

/** One thing to time: `body` is one iteration (one call, one turn, or a block of calls). */
export interface Subject {
  readonly name: string;
  /** Iterations per round, and untimed ones before them. */
  readonly iterations: number;
  readonly warmup: number;
  /** What one timed iteration covers, so a block of calls is reported per call. */
  readonly callsPerIteration?: number;
  /**
   * Untimed idleness before each iteration (warm-up ones too): for what the subject measures
   * is a call that finds the process idle (work a worker does only while idle), not a loop.
   */
  readonly idleBeforeMs?: number;
  readonly body: () => Promise<unknown> | unknown;
}

/** Every subject's samples, round by round. */
export class Rounds {
  readonly #samples = new Map<string, Float64Array[]>();

  /**
   * Runs `rounds` rounds. Within a round the subjects take turns in short slices, so each
   * round spans the same stretch of time for all of them and a neighbour's burst of load
   * hits numerator and denominator alike.
   */
  static async run(subjects: readonly Subject[], rounds: number): Promise<Rounds> {
    const result = new Rounds();
    for (const subject of subjects) {
      for (let i = 0; i < subject.warmup; i += 1) {
        if (subject.idleBeforeMs !== undefined) await pause(subject.idleBeforeMs);
        await subject.body();
      }
    }
    for (let round = 0; round < rounds; round += 1) {
      const samples = subjects.map((subject) => ({ subject, taken: new Float64Array(subject.iterations), count: 0 }));
      while (samples.some((entry) => entry.count < entry.subject.iterations)) {
        for (const entry of samples) {
          const slice = Math.max(1, Math.ceil(entry.subject.iterations / SLICES_PER_ROUND));
          for (let i = 0; i < slice && entry.count < entry.subject.iterations; i += 1) entry.taken[(entry.count += 1) - 1] = await time(entry.subject);
        }
      }
      for (const entry of samples) result.#add(entry.subject.name, entry.taken.sort());
    }
    return result;
  }

  #add(name: string, samples: Float64Array): void {
    this.#samples.set(name, [...(this.#samples.get(name) ?? []), samples]);
  }

  /** p50 and p99 over the samples of every round together. */
  latency(name: string): Latency {
    const rounds = this.#rounds(name);
    const all = new Float64Array(rounds.reduce((sum, round) => sum + round.length, 0));
    let offset = 0;
    for (const round of rounds) {
      all.set(round, offset);
      offset += round.length;
    }
    all.sort();
    return { p50Us: percentile(all, 0.5), p99Us: percentile(all, 0.99), samples: all.length };
  }

  /** Each round's p50 of `numerator` / its p50 of `denominator`. */
  ratios(numerator: string, denominator: string): number[] {
    const top = this.#rounds(numerator);
    const bottom = this.#rounds(denominator);
    return top.map((round, index) => p50(round) / p50(bottom[index] as Float64Array));
  }

  /** Each round's p50, in µs per call. */
  p50s(name: string): number[] {
    return this.#rounds(name).map(p50);
  }

  /** The median of the per-round ratios: robust to a round hit by a neighbour. */
  ratio(numerator: string, denominator: string): number {
    return median(this.ratios(numerator, denominator));
  }

  #rounds(name: string): Float64Array[] {
    const rounds = this.#samples.get(name);
    if (rounds === undefined) throw new Error(`bench: nothing measured as ${name}`);
    return rounds;
  }
}

/** µs per call of one iteration. */
async function time(subject: Subject): Promise<number> {
  if (subject.idleBeforeMs !== undefined) await pause(subject.idleBeforeMs);
  const started = performance.now();
  await subject.body();
  return ((performance.now() - started) * 1000) / (subject.callsPerIteration ?? 1);
}

function p50(sorted: Float64Array): number {
  return percentile(sorted, 0.5);
}

function percentile(sorted: Float64Array, q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

/** The q-quantile (nearest rank) of samples in any order, read as the rounds read theirs. */
export function percentileOf(values: readonly number[], q: number): number {
  return percentile(Float64Array.from(values).sort(), q);
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** Runs `body` `count` times back to back: one iteration of a block subject. */
export function block(count: number, body: () => unknown): () => Promise<void> {
  return async () => {
    for (let i = 0; i < count; i += 1) await body();
  };
}

/** One subject alone, one round: its latency. */
export async function measure(iterations: number, warmup: number, body: () => Promise<unknown> | unknown): Promise<Latency> {
  return (await Rounds.run([{ name: 'once', iterations, warmup, body }], 1)).latency('once');
}
