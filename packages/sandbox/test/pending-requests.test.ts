// The one request/reply table of the sandbox's channels: ids are fresh, each request settles
// once, whatever ends the channel fails every request left, aborts either fail the request
// or tell the far side, and a settled request leaves no listener on its signal behind.
import { getEventListeners } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { onAbort } from '@airlock/core';
import { PendingRequests } from '../src/rpc/pending-requests.js';
import { watchOwnSignal } from '../src/rpc/watch-abort.js';

/** A channel that records what was sent. */
function wire(): { sent: number[]; send: (id: number) => boolean } {
  const sent: number[] = [];
  return { sent, send: (id) => (sent.push(id), true) };
}

const abortListeners = (signal: AbortSignal): number => getEventListeners(signal, 'abort').length;

describe('PendingRequests', () => {
  it('sends each request under a fresh id and resolves the one its answer names', async () => {
    const table = new PendingRequests<string>();
    const { sent, send } = wire();
    const first = table.request(undefined, send);
    const second = table.request(undefined, send);
    expect(sent).toEqual([1, 2]);
    expect(table.size).toBe(2);
    expect(table.resolve(2, 'two')).toBe(true);
    expect(table.resolve(1, 'one')).toBe(true);
    await expect(first).resolves.toBe('one');
    await expect(second).resolves.toBe('two');
    expect(table.size).toBe(0);
  });

  it('settles once: a second answer, a late failure or an unknown id changes nothing', async () => {
    const table = new PendingRequests<string>();
    const answer = table.request(undefined, wire().send);
    expect(table.resolve(1, 'first')).toBe(true);
    expect(table.resolve(1, 'second')).toBe(false);
    expect(table.fail(1, 'late')).toBe(false);
    expect(table.resolve(99, 'stray')).toBe(false);
    await expect(answer).resolves.toBe('first');
  });

  it('a request that cannot be sent fails at once, and leaves nothing pending', async () => {
    const table = new PendingRequests<string>();
    await expect(table.request(undefined, () => false)).rejects.toThrow('could not be sent');
    expect(table.size).toBe(0);
  });

  it('failAll fails every request left (the channel ended) and later requests still work', async () => {
    const table = new PendingRequests<string>();
    const waiting = [table.request(undefined, wire().send), table.request(undefined, wire().send)];
    table.failAll('the child exited');
    for (const answer of waiting) await expect(answer).rejects.toThrow('the child exited');
    const next = table.request(undefined, wire().send);
    table.resolve(3, 'fine');
    await expect(next).resolves.toBe('fine');
  });

  it('close fails every request left and every later one, without sending it', async () => {
    const table = new PendingRequests<string>();
    const waiting = table.request(undefined, wire().send);
    table.close('the call ended');
    await expect(waiting).rejects.toThrow('the call ended');
    const { sent, send } = wire();
    await expect(table.request(undefined, send)).rejects.toThrow('the call ended');
    expect(sent).toEqual([]);
  });

  it('with `failed`, a failure resolves with an outcome instead of rejecting', async () => {
    const table = new PendingRequests<{ ok: boolean; why?: string }>({ failed: (why) => ({ ok: false, why }) });
    const answer = table.request(undefined, wire().send);
    table.failAll('the sandbox process was killed');
    await expect(answer).resolves.toEqual({ ok: false, why: 'the sandbox process was killed' });
  });

  it('keeps each request\'s context until it settles, and runs onSettled once per request', () => {
    const settled = vi.fn();
    const table = new PendingRequests<string, { tenant: string }>({ onSettled: settled });
    void table.request({ tenant: 'acme' }, wire().send);
    void table.request({ tenant: 'globex' }, wire().send);
    expect(table.context(1)).toEqual({ tenant: 'acme' });
    expect(table.contexts()).toEqual([{ tenant: 'acme' }, { tenant: 'globex' }]);
    table.resolve(1, 'x');
    table.resolve(1, 'again');
    expect(table.context(1)).toBeUndefined();
    expect(settled.mock.calls).toEqual([[{ tenant: 'acme' }]]);
  });

  it('an abort fails the request at once, and an already aborted signal sends nothing', async () => {
    const table = new PendingRequests<string>({ watchAbort: onAbort });
    const controller = new AbortController();
    const answer = table.request(undefined, wire().send, { signal: controller.signal });
    controller.abort();
    await expect(answer).rejects.toThrow('cancelled');
    const { sent, send } = wire();
    await expect(table.request(undefined, send, { signal: controller.signal })).rejects.toThrow('cancelled');
    expect(sent).toEqual([]);
    expect(table.size).toBe(0);
  });

  it('with onAbort, an abort tells the far side once and the request waits for its answer', async () => {
    const table = new PendingRequests<string>({ watchAbort: onAbort });
    const controller = new AbortController();
    const told = vi.fn();
    const answer = table.request(undefined, wire().send, { signal: controller.signal, onAbort: told });
    controller.abort();
    controller.abort();
    expect(told.mock.calls).toEqual([[1]]);
    expect(table.size).toBe(1);
    table.resolve(1, 'stopped');
    await expect(answer).resolves.toBe('stopped');
  });

  it('leaves no abort listener behind once requests settle, however they settle', () => {
    const table = new PendingRequests<string>({ failed: (why) => why, watchAbort: onAbort });
    const controller = new AbortController();
    for (let i = 0; i < 50; i += 1) void table.request(undefined, wire().send, { signal: controller.signal, onAbort: () => undefined });
    expect(abortListeners(controller.signal)).toBe(1); // one fan-out listener, not fifty
    for (let id = 1; id <= 25; id += 1) table.resolve(id, 'done');
    table.failAll('exit');
    expect(abortListeners(controller.signal)).toBe(0);
  });

  it('a signal of its own is watched and left behind clean, and a cancellable request needs a way to watch it', async () => {
    const table = new PendingRequests<string>({ watchAbort: watchOwnSignal });
    const controller = new AbortController();
    const answer = table.request(undefined, wire().send, { signal: controller.signal });
    expect(abortListeners(controller.signal)).toBe(1);
    controller.abort();
    await expect(answer).rejects.toThrow('cancelled');
    expect(abortListeners(controller.signal)).toBe(0);
    const settled = new AbortController();
    void table.request(undefined, wire().send, { signal: settled.signal });
    table.resolve(2, 'done');
    expect(abortListeners(settled.signal)).toBe(0);
    const { sent, send } = wire();
    expect(() => new PendingRequests<string>().request(undefined, send, { signal: new AbortController().signal })).toThrow(TypeError);
    expect(sent).toEqual([]);
  });
});
