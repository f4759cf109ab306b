// A sandbox process's idle isolates are evicted once its resident memory passes 75% of the
// ceiling. Past half the ceiling the guard looks every 20 ms, reading the size afresh: a
// call's isolate can grow by 80 MiB between two samples 100 ms apart, and two at once once
// took a process past the mark that retires it before either worker evicted. It never
// evicts for memory a call might take: declaring a large `memoryMb` evicted neighbours so.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { IsolateRunner } from '../src/isolate/isolate-runner.js';
import { MemoryGuard } from '../src/worker/memory-guard.js';

const MIB = 1024 * 1024;

/** A guard whose watch share (half its ceiling) stands `belowMb` under this process's size now, and the reliefs it asked its runner for. */
function guardWatching(belowMb: number): { guard: MemoryGuard; asked: number[] } {
  const asked: number[] = [];
  // Its last task held much: the look after it reads the size afresh.
  const runner = { relieveMemory: (bytes: number) => asked.push(bytes), lastTaskHeldMuch: () => true } as unknown as IsolateRunner;
  return { guard: new MemoryGuard(runner, 2 * (process.memoryUsage.rss() / MIB - belowMb)), asked };
}

describe('MemoryGuard', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('past half its ceiling, sees growth past the mark within 20 ms, not at the next 100 ms look', () => {
    // Half the ceiling 16 MiB under the size now: the mark (75%) is about 1.5 x the size.
    const { guard, asked } = guardWatching(16);
    guard.afterTask(); // past half, under the mark
    expect(asked).toEqual([]);
    const markMb = 0.75 * 2 * (process.memoryUsage.rss() / MIB - 16);
    // Memory a call's isolate would take, touched so that it is resident.
    const grown = Buffer.allocUnsafe(Math.ceil(markMb - process.memoryUsage.rss() / MIB + 64) * MIB).fill(1);
    vi.advanceTimersByTime(20);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toBeGreaterThan(16 * MIB);
    grown.fill(0); // held until the look has read it
  });

  it('under half its ceiling, keeps to its 100 ms looks', () => {
    const { guard, asked } = guardWatching(-4096); // half the ceiling 4 GiB above the size now
    guard.afterTask();
    vi.advanceTimersByTime(100);
    expect(vi.getTimerCount()).toBe(1); // the regular look only
    expect(asked).toEqual([]);
  });
});
