// Each layer of call scoping on its own: a request names its call's token and finds
// nothing once that call ended; nothing is answered after the realm reported; nothing is
// delivered after the end; a call is over only when its isolate has nothing left to run.
import type ivm from 'isolated-vm';
import { describe, expect, it, vi } from 'vitest';
import { CallRegistry } from '../src/isolate/call-registry.js';
import { LiveCall } from '../src/isolate/live-call.js';

interface FakeRealm {
  isolate: { isDisposed: boolean };
  entry: { apply: ReturnType<typeof vi.fn<(...args: unknown[]) => Promise<unknown>>> };
}

function fakeRealm(): FakeRealm {
  return { isolate: { isDisposed: false }, entry: { apply: vi.fn(() => Promise.resolve(undefined)) } };
}

function liveCall(realm: FakeRealm, capabilities = vi.fn(async () => '"answer"')): LiveCall {
  return new LiveCall({
    token: 'token-1',
    isolate: realm.isolate as unknown as ivm.Isolate,
    granted: new Set(['kv.get']),
    capabilities,
    start: (args) => realm.entry.apply(undefined, args) as Promise<unknown>,
  });
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('CallRegistry', () => {
  it('a request naming an ended or unknown call reaches no capability', async () => {
    const registry = new CallRegistry();
    const handlerOfA = vi.fn(async () => '"a"');
    const handlerOfB = vi.fn(async () => '"b"');
    const realm = fakeRealm();
    const a = registry.open({ isolate: realm.isolate as unknown as ivm.Isolate, granted: new Set(['kv.get']), capabilities: handlerOfA, start: () => Promise.resolve() });
    registry.close(a);
    registry.open({ isolate: realm.isolate as unknown as ivm.Isolate, granted: new Set(['kv.get']), capabilities: handlerOfB, start: () => Promise.resolve() });
    registry.receive('capability', a.token, 1, 'kv.get', '{}');
    registry.receive('capability', 'not-a-token', 2, 'kv.get', '{}');
    await flush();
    expect(handlerOfA).not.toHaveBeenCalled();
    expect(handlerOfB).not.toHaveBeenCalled();
  });

  it('tokens are unguessable and unique per call', () => {
    const registry = new CallRegistry();
    const realm = fakeRealm();
    const options = { isolate: realm.isolate as unknown as ivm.Isolate, granted: new Set<string>(), capabilities: undefined, start: () => Promise.resolve() };
    const tokens = new Set(Array.from({ length: 100 }, () => registry.open(options).token));
    expect(tokens.size).toBe(100);
    for (const token of tokens) expect(token).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('LiveCall', () => {
  it('answers requests while the call runs, and delivers into its own realm', async () => {
    const realm = fakeRealm();
    const handler = vi.fn(async () => '"answer"');
    const call = liveCall(realm, handler);
    call.request(1, 'kv.get', '{"key":"k"}');
    await flush();
    expect(handler).toHaveBeenCalledWith('kv.get', '{"key":"k"}');
    expect(realm.entry.apply).toHaveBeenCalledWith(undefined, ['deliver', 1, true, '"answer"']);
  });

  it('refuses a request made after the realm reported', async () => {
    const realm = fakeRealm();
    const handler = vi.fn(async () => '"answer"');
    const call = liveCall(realm, handler);
    call.report('ok', '1');
    call.request(1, 'kv.get', '{}');
    await flush();
    expect(handler).not.toHaveBeenCalled();
    expect(realm.entry.apply).not.toHaveBeenCalled();
  });

  it('delivers nothing that answers after the call ended, and counts it as unanswered', async () => {
    const realm = fakeRealm();
    let answer!: (json: string) => void;
    const call = liveCall(realm, vi.fn(() => new Promise<string>((resolve) => (answer = resolve))));
    call.request(1, 'kv.get', '{}');
    expect(call.unanswered).toBe(1);
    call.end();
    answer('"late"');
    await flush();
    expect(realm.entry.apply).not.toHaveBeenCalled();
  });

  it('is finished only when the realm reported and every task it started has settled', async () => {
    const realm = fakeRealm();
    const call = liveCall(realm);
    let settle!: () => void;
    call.track(new Promise<void>((resolve) => (settle = resolve)));
    call.report('ok', '"done"');
    let finished = false;
    void call.finished.then(() => (finished = true));
    await flush();
    expect(finished).toBe(false);
    settle();
    await expect(call.finished).resolves.toEqual({ kind: 'ok', payload: '"done"' });
  });

  it('a task rejected while the isolate lives is a stray rejection; one rejected because the isolate died fails the call', async () => {
    const realm = fakeRealm();
    const call = liveCall(realm);
    call.track(Promise.reject(new Error('Script execution timed out.')));
    call.report('ok', '1');
    await expect(call.finished).resolves.toMatchObject({ kind: 'ok' });

    const dying = fakeRealm();
    const other = liveCall(dying);
    dying.isolate.isDisposed = true;
    other.track(Promise.reject(new Error('Isolate was disposed during execution')));
    await expect(other.finished).rejects.toThrow('disposed');
  });

  it('refuses ungranted names and oversized arguments (counted in UTF-8), with codes and no host detail', async () => {
    const realm = fakeRealm();
    const handler = vi.fn(async () => '"x"');
    const call = liveCall(realm, handler);
    call.request(1, 'admin.wipe', '{}');
    call.request(2, 'kv.get', 'x'.repeat(1024 * 1024 + 1));
    call.request(3, 'kv.get', JSON.stringify('\u20ac'.repeat(400_000))); // 400,002 units, 1,200,002 bytes
    await flush();
    expect(handler).not.toHaveBeenCalled();
    expect(realm.entry.apply.mock.calls.map((args) => (args[1] as unknown[]).slice(1))).toEqual([
      [1, false, 'NOT_GRANTED'],
      [2, false, 'TOO_LARGE'],
      [3, false, 'TOO_LARGE'],
    ]);
  });

  it('bounds what one call has in flight at the embedder: requests and bytes', async () => {
    const realm = fakeRealm();
    const handler = vi.fn(() => new Promise<string>(() => undefined)); // a capability waiting on slow I/O
    const call = liveCall(realm, handler);
    for (let id = 1; id <= 20; id += 1) call.request(id, 'kv.get', '{}');
    expect(handler).toHaveBeenCalledTimes(16);
    const big = JSON.stringify('x'.repeat(900_000));
    const bytes = liveCall(fakeRealm(), handler);
    handler.mockClear();
    for (let id = 1; id <= 6; id += 1) bytes.request(id, 'kv.get', big);
    expect(handler).toHaveBeenCalledTimes(4); // 4 x 0.9 MB in flight; the fifth would pass 4 MiB
    await flush();
    const refused = realm.entry.apply.mock.calls.map((args) => args[1] as unknown[]).filter((args) => args[3] === 'TOO_MANY_REQUESTS');
    expect(refused.map((args) => args[1])).toEqual([17, 18, 19, 20]);
  });

  it('refuses every request past 1,000 in one call', async () => {
    const realm = fakeRealm();
    const handler = vi.fn(async () => '"x"');
    const call = liveCall(realm, handler);
    for (let id = 1; id <= 1002; id += 1) {
      call.request(id, 'kv.get', '{}');
      if (id % 10 === 0) await flush();
    }
    await flush();
    expect(handler).toHaveBeenCalledTimes(1000);
    const refused = realm.entry.apply.mock.calls.map((args) => args[1] as unknown[]).filter((args) => args[3] === 'TOO_MANY_REQUESTS');
    expect(refused.map((args) => args[1])).toEqual([1001, 1002]);
  });
});
