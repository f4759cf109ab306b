import { describe, expect, it } from 'vitest';
import { MessageOutbox, unbatch, type Batch } from '../src/host/message-outbox.js';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('MessageOutbox', () => {
  it('sends the messages of one turn as one wire message, in order, and a lone message as itself', async () => {
    const wire: (number | Batch<number>)[] = [];
    const outbox = new MessageOutbox<number>((message) => wire.push(message) > 0, () => true);
    outbox.send(1);
    await Promise.resolve();
    outbox.send(2);
    outbox.send(3);
    expect(wire).toEqual([]);
    await nextTurn();
    outbox.send(4);
    await nextTurn();
    expect(wire).toEqual([{ type: 'batch', messages: [1, 2, 3] }, 4]);
    expect(wire.flatMap((message) => unbatch(message))).toEqual([1, 2, 3, 4]);
  });

  it('refuses a message once the peer is gone, and flush sends at once', () => {
    let connected = true;
    const wire: (string | Batch<string>)[] = [];
    const outbox = new MessageOutbox<string>((message) => wire.push(message) > 0, () => connected);
    expect(outbox.send('a')).toBe(true);
    outbox.flush();
    expect(wire).toEqual(['a']);
    connected = false;
    expect(outbox.send('b')).toBe(false);
  });
});
