// What HTTP clients can make `airlock serve` hold: bodies being read, bounded across clients;
// a response its client stopped reading, closed (and its calls cancelled) after a stall.
import type { ServerResponse } from 'node:http';
import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BodyBudget, UnreadResponses } from '../src/support/http-memory.js';

/** A response whose socket has sent `sent` bytes, with `waiting` bytes queued for it. */
/** `sent`: bytes handed to the socket; `buffered`: those of them still in its own buffer, not yet taken by the kernel. */
function response(): ServerResponse & { waiting: number; sent: number; buffered: number; destroyed: boolean } {
  const res = new EventEmitter() as unknown as ServerResponse & { waiting: number; sent: number; buffered: number; destroyed: boolean };
  res.waiting = 0;
  res.sent = 0;
  res.buffered = 0;
  Object.defineProperty(res, 'writableLength', { get: () => res.waiting });
  Object.defineProperty(res, 'socket', { get: () => ({ bytesWritten: res.sent, writableLength: res.buffered }) });
  res.destroyed = false;
  res.destroy = (() => {
    res.destroyed = true;
    res.emit('close');
    return res;
  }) as never;
  return res;
}

describe('BodyBudget', () => {
  it('holds a request\'s bytes until its response closes, a tenant at most its share, and all at most the bound', () => {
    const budget = new BodyBudget(40, 10);
    const [first, second, third] = [new EventEmitter(), new EventEmitter(), new EventEmitter()];
    const heavy = budget.forRequest('heavy', first);
    expect(heavy(6)).toBe(true);
    expect(budget.forRequest('heavy', second)(5)).toBe(false); // past heavy's share
    const light = budget.forRequest('light', third);
    expect(light(10)).toBe(true); // another tenant is not held up
    first.emit('close');
    expect(budget.forRequest('heavy', second)(10)).toBe(true);
    for (const tenant of ['a', 'b']) expect(budget.forRequest(tenant, new EventEmitter())(10)).toBe(true);
    expect(budget.forRequest('c', new EventEmitter())(1)).toBe(false); // 40 in all
  });
});

describe('UnreadResponses', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('closes a response whose client took nothing of what waits for 15 s, and runs its closing (the calls cancelled)', () => {
    const closed: ServerResponse[] = [];
    const unread = new UnreadResponses((res) => closed.push(res));
    const stuck = response();
    const cancel = vi.fn();
    unread.watch(stuck);
    unread.watch(stuck, cancel);
    stuck.waiting = 1_000_000;
    stuck.sent = 5000;
    vi.advanceTimersByTime(14_500);
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

  it('counts as reading a client that drains the socket\'s own buffer after the last bytes were handed to it', () => {
    const unread = new UnreadResponses(() => undefined);
    const draining = response();
    unread.watch(draining);
    draining.sent = 4_000_000; // everything handed over; the socket still buffers most of it
    draining.buffered = 3_000_000;
    for (let second = 0; second < 20; second += 1) {
      draining.buffered -= 100_000; // the kernel takes 100 KB a second as the client reads
      vi.advanceTimersByTime(1000);
    }
    expect(draining.destroyed).toBe(false);
    unread.stop();
  });
});
