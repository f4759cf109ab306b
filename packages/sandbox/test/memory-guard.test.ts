// Room for a call's growth is made before the call: a call's isolate may grow by its whole
// `memoryMb` faster than the looks after a task (or every 100 ms) notice, and two at once once
// took a sandbox process past the mark that retires it before either worker evicted.
import { describe, expect, it } from 'vitest';
import type { IsolateRunner } from '../src/isolate/isolate-runner.js';
import { MemoryGuard } from '../src/worker/memory-guard.js';

const MIB = 1024 * 1024;

/** A guard whose pressure mark (75% of the ceiling) stands `roomMb` above this process's size now, and what it asked its runner to free. */
function guardWithRoom(roomMb: number): { guard: MemoryGuard; asked: number[] } {
  const asked: number[] = [];
  const runner = { relieveMemory: (bytes: number) => asked.push(bytes), lastTaskHeldMuch: () => false } as unknown as IsolateRunner;
  return { guard: new MemoryGuard(runner, (process.memoryUsage.rss() / MIB + roomMb) / 0.75), asked };
}

describe('MemoryGuard.beforeCall', () => {
  it('evicts nothing while the call\'s whole allowance fits under the mark', () => {
    const { guard, asked } = guardWithRoom(256);
    guard.beforeCall(16);
    expect(asked).toEqual([]);
  });

  it('frees idle isolates first when the call could take the process past the mark, by what it could grow past it', () => {
    const { guard, asked } = guardWithRoom(256);
    guard.beforeCall(512);
    expect(asked).toHaveLength(1);
    // 512 MiB of growth against 256 of room: about 256 over, and the relief's margin.
    expect(asked[0]).toBeGreaterThan(200 * MIB);
    expect(asked[0]).toBeLessThan(320 * MIB);
  });
});
