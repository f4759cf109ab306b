import { describe, expect, it } from 'vitest';
import { MessageOutbox, unbatch, type Batch } from '../src/host/message-outbox.js';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('MessageOutbox', () => {
  it('sends the first message of a turn at once and the rest of that turn as one wire message, in order', async () => {
    const wire: (number | Batch<number>)[] = [];
    const outbox = new MessageOutbox<number>((message) => wire.push(message) > 0, () => true);
    outbox.send(1);
    expect(wire).toEqual([1]); // a lone call waits for nothing
    await Promise.resolve();
    outbox.send(2);
    outbox.send(3);
    outbox.send(4);
    expect(wire).toEqual([1]);
    await nextTurn();
    outbox.send(5);
    await nextTurn();
    expect(wire).toEqual([1, { type: 'batch', messages: [2, 3, 4] }, 5]);
    expect(wire.flatMap((message) => unbatch(message))).toEqual([1, 2, 3, 4, 5]);
  });

  it('refuses a message once the peer is gone, and flush sends at once', () => {
    let connected = true;
    const wire: (string | Batch<string>)[] = [];
    const outbox = new MessageOutbox<string>((message) => wire.push(message) > 0, () => connected);
    expect(outbox.send('a')).toBe(true);
    expect(outbox.send('b')).toBe(true);
    outbox.flush();
    expect(wire).toEqual(['a', 'b']);
    connected = false;
    expect(outbox.send('c')).toBe(false);
  });
});
