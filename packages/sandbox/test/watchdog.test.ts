// The timeout a task carries into isolated-vm: when a spinning call is stopped, and so how
// late a CPU kill is answered past the call's allowance.
import { describe, expect, it } from 'vitest';
import type ivm from '../src/isolate/ivm.js';
import { Watchdog } from '../src/isolate/watchdog.js';

/** An isolate that has used no CPU yet: the timeout is read before the task starts. */
const idleIsolate = { cpuTime: 0n, isDisposed: false } as unknown as ivm.Isolate;

function firstTaskTimeout(cpuMs: number, timeoutMs = 60_000): number {
  const watchdog = new Watchdog(idleIsolate, { cpuMs, timeoutMs }, 64);
  try {
    return watchdog.taskTimeoutMs();
  } finally {
    watchdog.stop();
  }
}

describe('Watchdog.taskTimeoutMs', () => {
  it('gives a short CPU allowance a short margin: a fifth of it, at least 10 ms', () => {
    expect(firstTaskTimeout(50)).toBe(60);
    expect(firstTaskTimeout(20)).toBe(30);
    expect(firstTaskTimeout(100)).toBe(120);
  });

  it('never gives a long allowance more than 25 ms of margin', () => {
    expect(firstTaskTimeout(200)).toBe(225);
    expect(firstTaskTimeout(30_000)).toBe(30_025);
  });

  it('stops the task before its wall-clock deadline when that comes first', () => {
    // 25 ms before the deadline (a twentieth of a short one), so the verdict finds the isolate idle.
    expect(firstTaskTimeout(1000, 300)).toBeLessThanOrEqual(285);
    expect(firstTaskTimeout(1000, 300)).toBeGreaterThan(270);
  });
});
