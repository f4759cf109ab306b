// What HTTP clients can make `airlock serve` hold: bodies being read, bounded across clients;
// a response its client stopped reading, closed (and its calls cancelled) after a stall.
import type { ServerResponse } from 'node:http';
import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BodyBudget, UnreadResponses } from '../src/support/http-memory.js';

/** A response whose socket has sent `sent` bytes, with `waiting` bytes queued for it. */
function response(): ServerResponse & { waiting: number; sent: number; destroyed: boolean } {
  const res = new EventEmitter() as unknown as ServerResponse & { waiting: number; sent: number; destroyed: boolean };
  res.waiting = 0;
  res.sent = 0;
  Object.defineProperty(res, 'writableLength', { get: () => res.waiting });
  Object.defineProperty(res, 'socket', { get: () => ({ bytesWritten: res.sent }) });
  res.destroyed = false;
  res.destroy = (() => {
    res.destroyed = true;
    res.emit('close');
    return res;
  }) as never;
  return res;
}

describe('BodyBudget', () => {
  it('takes bytes up to its bound, refuses past it without taking any, and takes again once given back', () => {
    const budget = new BodyBudget(10);
    expect(budget.take(6)).toBe(true);
    expect(budget.take(5)).toBe(false);
    expect(budget.take(4)).toBe(true);
    budget.give(6);
    expect(budget.take(6)).toBe(true);
    expect(budget.take(1)).toBe(false);
  });
});

describe('UnreadResponses', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('closes a response whose client took nothing of what waits for 3 s, and runs its closing (the calls cancelled)', () => {
    const closed: ServerResponse[] = [];
    const unread = new UnreadResponses((res) => closed.push(res));
    const stuck = response();
    const cancel = vi.fn();
    unread.watch(stuck);
    unread.watch(stuck, cancel);
    stuck.waiting = 1_000_000;
    stuck.sent = 5000;
    vi.advanceTimersByTime(2500);
    expect(stuck.destroyed).toBe(false);
    vi.advanceTimersByTime(1500);
    expect(stuck.destroyed).toBe(true);
    expect(closed).toEqual([stuck]);
    expect(cancel).toHaveBeenCalledTimes(1);
    unread.stop();
  });

  it('keeps a response its client reads, however slowly, and an idle one with nothing waiting', () => {
    const unread = new UnreadResponses(() => undefined);
    const slow = response();
    const idle = response();
    unread.watch(slow);
    unread.watch(idle);
    slow.waiting = 50_000_000;
    for (let second = 0; second < 30; second += 1) {
      slow.sent += 1; // a byte a second still moves
      vi.advanceTimersByTime(1000);
    }
    expect(slow.destroyed).toBe(false);
    expect(idle.destroyed).toBe(false);
    unread.stop();
  });
});
