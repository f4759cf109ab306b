// What reaches the MCP stdio transport: whole messages, one line at a time; a message over
// the limit is dropped as it streams in and reported with its id, and the next one passes.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { MessageLines, type Dropped } from '../src/support/message-lines.js';

async function through(chunks: readonly (string | Buffer)[], maxBytes: number): Promise<{ lines: string[]; dropped: Dropped[] }> {
  const dropped: Dropped[] = [];
  const input = new PassThrough();
  const lines: string[] = [];
  const output = input.pipe(new MessageLines((entry) => dropped.push(entry), maxBytes));
  output.on('data', (line: Buffer) => lines.push(line.toString()));
  const ended = new Promise((resolve) => output.on('end', resolve));
  for (const chunk of chunks) input.write(chunk);
  input.end();
  await ended;
  return { lines, dropped };
}

describe('messages from an MCP client over stdio', () => {
  it('passes each line on whole, however the chunks fall', async () => {
    const { lines, dropped } = await through(['{"id":1}\n{"i', 'd":2}\n', '{"id":3}\n'], 64);
    expect(lines).toEqual(['{"id":1}\n', '{"id":2}\n', '{"id":3}\n']);
    expect(dropped).toEqual([]);
  });

  it('drops a line over the limit, across chunks, reports its id, and passes the next', async () => {
    const big = `{"jsonrpc":"2.0","id":"call-7","method":"tools/call","params":{"d":"${'x'.repeat(200)}"}}`;
    const { lines, dropped } = await through(['{"id":1}\n', big.slice(0, 50), big.slice(50), '\n{"id":2}\n'], 100);
    expect(lines).toEqual(['{"id":1}\n', '{"id":2}\n']);
    expect(dropped).toEqual([{ id: 'call-7', bytes: big.length, reason: 'too-large' }]);
  });

  it('answers null where a request\'s id cannot be known for sure, and never answers a response', async () => {
    const nested = `{"method":"tools/call","params":{"id":5,"d":"${'x'.repeat(200)}"},"id":9}\n`;
    const headless = `{"method":"x","d":"${'x'.repeat(200)}"}\n`;
    // The client's answer to an elicitation of ours: its id is from our numbering, not a request of the client's.
    const response = `{"jsonrpc":"2.0","id":0,"result":{"action":"accept","content":{"note":"${'x'.repeat(200)}"}}}\n`;
    const { dropped } = await through([nested, headless, response], 100);
    expect(dropped.map((entry) => entry.id)).toEqual([null, null, undefined]);
  });

  it('skips blank and whitespace-only lines: they are no message, so nothing answers them', async () => {
    const { lines, dropped } = await through(['\n{"id":1}\n\n', '   \r\n\t\n{"id":2}\n', '  '], 64);
    expect(lines).toEqual(['{"id":1}\n', '{"id":2}\n']);
    expect(dropped).toEqual([]);
  });

  it('drops a line that is not UTF-8 and reports its id: decoded, U+FFFD would reach a tool in its arguments', async () => {
    const bad = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"x":"a'), Buffer.from([0xff]), Buffer.from('b"}}}\n')]);
    const { lines, dropped } = await through(['{"id":1}\n', bad, '{"id":2}\n'], 1000);
    expect(lines).toEqual(['{"id":1}\n', '{"id":2}\n']);
    expect(dropped).toEqual([{ id: 4, bytes: bad.length - 1, reason: 'not-utf8' }]);
  });

  it('a last message without its newline is passed on when input ends', async () => {
    const { lines } = await through(['{"id":1}\n{"id":2}'], 64);
    expect(lines).toEqual(['{"id":1}\n', '{"id":2}\n']);
  });
});
