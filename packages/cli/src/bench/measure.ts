// Timing helpers for benchmarks (never for tests): per-iteration samples, percentiles.
export interface Sample {
  readonly meanUs: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly iterations: number;
}

export async function measure(iterations: number, warmup: number, body: () => Promise<unknown> | unknown): Promise<Sample> {
  for (let i = 0; i < warmup; i += 1) await body();
  const samples = new Float64Array(iterations);
  const started = performance.now();
  for (let i = 0; i < iterations; i += 1) {
    const t = performance.now();
    await body();
    samples[i] = (performance.now() - t) * 1000;
  }
  const totalUs = (performance.now() - started) * 1000;
  samples.sort();
  const at = (q: number): number => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? 0;
  return { meanUs: totalUs / iterations, p50Us: at(0.5), p99Us: at(0.99), iterations };
}

/** Mean over a tight loop without per-iteration timers, for sub-microsecond bodies. */
export async function measureLoop(iterations: number, warmup: number, body: () => Promise<unknown> | unknown): Promise<number> {
  for (let i = 0; i < warmup; i += 1) await body();
  const started = performance.now();
  for (let i = 0; i < iterations; i += 1) await body();
  return ((performance.now() - started) * 1000) / iterations;
}
