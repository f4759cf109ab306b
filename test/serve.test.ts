// airlock serve driven by the official MCP SDK Client, over stdio and Streamable HTTP.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CancelledNotificationSchema, ElicitRequestSchema, LoggingMessageNotificationSchema, type CallToolResult, type LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { connect as connectSocket, type Socket } from 'node:net';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pluginFolder } from './support/plugin-harness.js';
import { airlock, BIN, oneLine, ROOT } from './support/run-cli.js';

let busyDir: string;
let relayDir: string;
beforeAll(async () => {
  busyDir = await pluginFolder('plugins/busy.js', { name: 'busy', limits: { cpuMs: 30_000, timeoutMs: 40_000 } });
  relayDir = await pluginFolder('plugins/relay.js', { name: 'relay', capabilities: ['log'], limits: { timeoutMs: 5000 } });
});
afterAll(async () => {
  await rm(busyDir, { recursive: true, force: true });
  await rm(relayDir, { recursive: true, force: true });
});

const text = (result: CallToolResult): string => (result.content[0] as { text: string }).text;

/** The behaviours every transport must show; `connect` yields a client and the server's stderr so far. */
function behaviours(connect: (options?: { elicitation?: 'accept' | 'decline' }) => Promise<{ client: Client; stderr: () => string; close: () => Promise<void> }>) {
  it('lists the projected tools, with outputSchema where a tool declares one', async () => {
    const { client, close } = await connect();
    try {
      const { tools } = await client.listTools();
      const names = tools.map((tool) => tool.name).sort();
      expect(names).toEqual(['busy', 'busy_exclusive', 'delete_file', 'extract_emails', 'fibonacci', 'slugify', 'statistics', 'whoami', 'word_count', 'write_file']);
      expect(tools.find((tool) => tool.name === 'word_count')?.outputSchema).toMatchObject({ type: 'object' });
      expect(JSON.stringify(tools)).not.toMatch(/timeoutMs|cpuMs|isConcurrencySafe/);
    } finally {
      await close();
    }
  });

  it('calls a tool, refuses bad arguments, a denied path and a CPU hog with readable isError results, and keeps answering', async () => {
    const { client, close } = await connect();
    try {
      const ok = (await client.callTool({ name: 'word_count', arguments: { text: 'one two' } })) as CallToolResult;
      expect(ok.isError).toBe(false);
      expect(ok.structuredContent).toEqual({ words: 2, lines: 1, characters: 7 });

      const bad = (await client.callTool({ name: 'word_count', arguments: { txt: 'x' } })) as CallToolResult;
      expect(bad.isError).toBe(true);
      expect(text(bad)).toContain('INVALID_ARGS');

      const denied = (await client.callTool({ name: 'write_file', arguments: { path: '/etc/hosts', content: 'x' } })) as CallToolResult;
      expect(denied.isError).toBe(true);
      expect(text(denied)).toContain('PERMISSION_DENIED');

      const hog = (await client.callTool({ name: 'fibonacci', arguments: { n: 60 } })) as CallToolResult;
      expect(hog.isError).toBe(true);
      expect(text(hog)).toContain('CPU_LIMIT');

      const unknown = (await client.callTool({ name: 'no_such_tool', arguments: {} })) as CallToolResult;
      expect(unknown.isError).toBe(true);
      expect(text(unknown)).toContain('UNKNOWN_TOOL');

      const after = (await client.callTool({ name: 'slugify', arguments: { text: 'Still Here' } })) as CallToolResult;
      expect(text(after)).toBe('"still-here"');
    } finally {
      await close();
    }
  });

  it('a cancelled call is stopped in the sandbox, and the server keeps answering', async () => {
    const BODY_MS = 20_000;
    const { client, stderr, close } = await connect();
    try {
      const controller = new AbortController();
      const pending = client.callTool({ name: 'busy_exclusive', arguments: { ms: BODY_MS } }, undefined, { signal: controller.signal, timeout: 60_000 });
      pending.catch(() => undefined); // asserted below
      // The signal: the server logged that the call started.
      await expect.poll(() => stderr(), { timeout: 10_000 }).toMatch(/busy_exclusive started/);
      const abortedAt = performance.now();
      controller.abort();
      await expect(pending).rejects.toThrow();
      // The started call is let settle: its answer comes when the sandbox stopped the body, long
      // before the 20 s body would have ended (were nothing killed, it would come then).
      await expect.poll(() => stderr(), { timeout: BODY_MS / 2, interval: 50 }).toMatch(/busy_exclusive → ABORTED/);
      expect(performance.now() - abortedAt).toBeLessThan(BODY_MS / 4);
      const after = (await client.callTool({ name: 'slugify', arguments: { text: 'Next' } })) as CallToolResult;
      expect(text(after)).toBe('"next"');
    } finally {
      await close();
    }
  });

  it('ask without elicitation support ends as APPROVAL_UNAVAILABLE', async () => {
    const { client, close } = await connect();
    try {
      const result = (await client.callTool({ name: 'delete_file', arguments: { path: 'notes/old.md' } })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(text(result)).toContain('APPROVAL_UNAVAILABLE');
    } finally {
      await close();
    }
  });

  it.each([
    ['accept', false],
    ['decline', true],
  ] as const)('ask with elicitation: the client answers %s', async (answer, isError) => {
    const { client, close } = await connect({ elicitation: answer });
    const cancelled: unknown[] = [];
    client.setNotificationHandler(CancelledNotificationSchema, (notification) => void cancelled.push(notification.params));
    try {
      const result = (await client.callTool({ name: 'delete_file', arguments: { path: 'notes/old.md' } })) as CallToolResult;
      expect(result.isError).toBe(isError);
      // An answered question is not withdrawn afterwards (MCP cancels only requests in progress);
      // a cancel would have come before the call's result, on the same stream.
      expect(cancelled).toEqual([]);
      if (isError) expect(text(result)).toContain('PERMISSION_DENIED');
      else expect(result.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('"path":"notes/old.md"') });
    } finally {
      await close();
    }
  });
}

function makeClient(options: { elicitation?: 'accept' | 'decline' } = {}): Client {
  const client = new Client({ name: 'airlock-test', version: '1.0.0' }, { capabilities: options.elicitation === undefined ? {} : { elicitation: {} } });
  if (options.elicitation !== undefined) {
    const action = options.elicitation;
    client.setRequestHandler(ElicitRequestSchema, () => (action === 'accept' ? { action, content: { approve: true } } : { action }));
  }
  return client;
}

describe('airlock serve over stdio', () => {
  behaviours(async (options) => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'serve', '--plugins', 'examples/plugins', '--plugins', busyDir], cwd: ROOT, stderr: 'pipe' });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = makeClient(options);
    await client.connect(transport);
    return { client, stderr: () => stderr, close: () => client.close() };
  });
});

/** A real `airlock serve --http 0` on loopback; `stderr()` is what it logged so far. */
async function startHttp(extra: string[] = []): Promise<{ url: URL; stderr: () => string; stop: () => void }> {
  const server = spawn(process.execPath, [BIN, 'serve', '--http', '0', '--plugins', 'examples/plugins', '--plugins', busyDir, ...extra], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  // The signal: the server logs its address once it listens.
  await new Promise<void>((resolve, reject) => {
    server.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (/listening on http:\/\/\S+/.test(stderr)) resolve();
    });
    server.once('exit', (code) => reject(new Error(`airlock serve exited (${code}): ${stderr}`)));
  });
  return { url: new URL(/listening on (http:\/\/\S+)/.exec(stderr)![1]!), stderr: () => stderr, stop: () => server.kill('SIGTERM') };
}

describe('airlock serve over stdio: the connection itself', () => {
  /** A raw stdio server: send lines, collect the answers by id, end input. */
  function rawStdio(extra: string[] = []): { send: (line: string) => void; answer: (id: unknown) => Promise<Record<string, unknown>>; end: () => Promise<number | null>; kill: (signal: NodeJS.Signals, times?: number) => Promise<number | null>; stderr: () => string; stdout: () => string } {
    const server = spawn(process.execPath, ['--no-node-snapshot', BIN, 'serve', '--plugins', 'examples/plugins', ...extra], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    // A server that ended early is the test's failure to report, not a broken pipe that takes down the test process.
    server.stdin.on('error', () => undefined);
    let stdout = '';
    let everything = '';
    let stderr = '';
    const answers = new Map<unknown, Record<string, unknown>>();
    const waiting = new Map<unknown, (answer: Record<string, unknown>) => void>();
    server.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      everything += chunk.toString();
      for (let newline = stdout.indexOf('\n'); newline >= 0; newline = stdout.indexOf('\n')) {
        const message = JSON.parse(stdout.slice(0, newline)) as Record<string, unknown>;
        stdout = stdout.slice(newline + 1);
        if (!('id' in message)) continue;
        // Each answer is taken once, so a test may reuse an id.
        const waiter = waiting.get(message.id);
        waiting.delete(message.id);
        if (waiter === undefined) answers.set(message.id, message);
        else waiter(message);
      }
    });
    server.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
    return {
      send: (line) => void server.stdin.write(`${line}\n`),
      answer: (id) => {
        const answered = answers.get(id);
        answers.delete(id);
        return answered !== undefined ? Promise.resolve(answered) : new Promise((resolve) => waiting.set(id, resolve));
      },
      end: () => {
        server.stdin.end();
        return exited;
      },
      kill: async (signal, times = 1) => {
        server.kill(signal);
        if (times > 1) {
          // Signals sent together are delivered once: the repeats go the moment the server says it read the first.
          await new Promise<void>((resolve) => {
            const read = (): void => {
              if (!stderr.includes(`${signal}: cancelling the calls in progress`)) return;
              server.stderr.off('data', read);
              resolve();
            };
            server.stderr.on('data', read);
            read();
          });
          for (let sent = 1; sent < times; sent += 1) server.kill(signal);
        }
        return exited;
      },
      stderr: () => stderr,
      stdout: () => everything,
    };
  }
  const initialize = JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });

  /** A client that can answer elicitations, whose call `id` of an `ask` tool has the server asking it (its first request, id 0). */
  async function askedToApprove(id: number): Promise<ReturnType<typeof rawStdio>> {
    const server = rawStdio();
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 't', version: '1' } } }));
    await server.answer('init');
    server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    server.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'delete_file', arguments: { path: 'notes/a.md' } } }));
    expect(await server.answer(0)).toHaveProperty('method', 'elicitation/create');
    return server;
  }

  it('the client closing standard input ends the server with exit 0, once the calls it sent are answered', async () => {
    const server = rawStdio();
    server.send(initialize);
    expect(await server.answer('init')).toHaveProperty('result.serverInfo.name', 'airlock');
    server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'notes/a.md' } } }));
    const answered = server.answer(2);
    expect(await server.end()).toBe(0);
    expect(await answered).toHaveProperty('result.content');
  });

  // At a terminal one Ctrl-C reaches the server twice (its process group, and bin.ts's wrapper forwarding it).
  it.each([['SIGTERM', 1], ['SIGINT', 1], ['SIGINT', 2], ['SIGTERM', 3]] as const)('%s (sent %i times) with standard input still open: the call in progress is cancelled and answered, then the server exits 0', async (signal, times) => {
    const server = rawStdio(['--plugins', busyDir]);
    server.send(initialize);
    await server.answer('init');
    server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'busy_exclusive', arguments: { ms: 20_000 } } }));
    const answered = server.answer(7);
    // The signal: the server logged that the call started.
    await expect.poll(() => server.stderr(), { timeout: 10_000 }).toMatch(/busy_exclusive started/);
    const stoppedAt = performance.now();
    expect(await server.kill(signal, times)).toBe(0);
    expect(await answered).toMatchObject({ result: { isError: true, content: [{ text: expect.stringContaining('ABORTED') }] } });
    expect(performance.now() - stoppedAt).toBeLessThan(5000);
  });

  it('standard output carries no C1 control, bidi or invisible character raw: each is a \\u escape of the same text', async () => {
    const tricky = 'a\u009b31mb\u202ec\u0085d\u2028e';
    const dir = await pluginFolder('plugins/escapes.js', { name: 'escapes' });
    const server = rawStdio(['--plugins', dir]);
    server.send(initialize);
    await server.answer('init');
    server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    const listed = (await server.answer(1)) as { result: { tools: { name: string; description: string }[] } };
    expect(listed.result.tools.find((tool) => tool.name === 'tricky_text')?.description).toBe(`Returns ${tricky}.`);
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'tricky_text', arguments: {} } }));
    expect(await server.answer(2)).toMatchObject({ result: { content: [{ text: JSON.stringify(tricky) }] } });
    expect(await server.end()).toBe(0);
    expect(server.stdout()).not.toMatch(/[\u0080-\u009f\u202e\u2028]/);
    expect(server.stdout()).toContain('\\u009b31mb\\u202ec');
    await rm(dir, { recursive: true, force: true });
  });

  it('a request reusing the id of one in progress is refused -32600: the first keeps its id, so it can still be cancelled', async () => {
    const server = rawStdio(['--plugins', busyDir]);
    server.send(initialize);
    await server.answer('init');
    server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 300, method: 'tools/call', params: { name: 'busy_exclusive', arguments: { ms: 20_000 } } }));
    await expect.poll(() => server.stderr(), { timeout: 10_000 }).toContain('busy_exclusive started');
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 300, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'notes/a.md' } } }));
    expect(await server.answer(300)).toMatchObject({ error: { code: -32600, message: 'request id 300 is in use by a request in progress: an id may not be reused in a session' } });
    // The cancel reaches the first request (before, the second had taken its place).
    server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 300 } }));
    await expect.poll(() => server.stderr(), { timeout: 10_000 }).toMatch(/busy_exclusive → ABORTED/);
    // Its request over, the id may serve again.
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 300, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'notes/a.md' } } }));
    expect(await server.answer(300)).toHaveProperty('result.content');
    expect(await server.end()).toBe(0);
  });

  it('an answer to the approval question that is no elicitation result ends the call APPROVAL_UNAVAILABLE, said in one line', async () => {
    const server = await askedToApprove(4);
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 0, result: {} }));
    const text = ((await server.answer(4)) as { result: { content: { text: string }[] } }).result.content[0]!.text;
    expect(text).toBe('Error [APPROVAL_UNAVAILABLE]: delete_file: the approver failed (the client\'s answer is not an elicitation result (action: Invalid option: expected one of "accept"|"decline"|"cancel"))');
    expect(await server.end()).toBe(0);
  });

  it('an approval question still open when the client closes standard input ends its call as APPROVAL_UNAVAILABLE, and the server at once', async () => {
    // The question, which this client never answers.
    const server = await askedToApprove(3);
    const answered = server.answer(3);
    const clock = performance.now();
    expect(await server.end()).toBe(0);
    // Not the approval's own 60 s timeout.
    expect(performance.now() - clock).toBeLessThan(20_000);
    expect(JSON.stringify(await answered)).toContain('APPROVAL_UNAVAILABLE');
  }, 40_000);

  it('a line that is not JSON is answered -32700, and tools/call arguments that are not an object -32602, as JSON-RPC and the README say', async () => {
    const server = rawStdio();
    server.send(initialize);
    await server.answer('init');
    server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    server.send('{not json');
    expect(await server.answer(null)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'read_file', arguments: 'notes/a.md' } }));
    // One line naming the part at fault, not the SDK's multi-line zod dump.
    expect(await server.answer(5)).toMatchObject({ error: { code: -32602, message: expect.stringMatching(/^[^\n]*tools\/call: params\.arguments must be an object$/) } });
    server.send(JSON.stringify({ jsonrpc: '2.0', id: '5b', method: 'tools/call', params: { arguments: {} } }));
    expect(await server.answer('5b')).toMatchObject({ error: { code: -32602, message: expect.stringMatching(/^[^\n]*tools\/call: params\.name must be a string$/) } });
    // JSON-RPC lets a request leave params out: still invalid params for these two, in one line, not an internal error.
    server.send(JSON.stringify({ jsonrpc: '2.0', id: '5c', method: 'tools/call' }));
    expect(await server.answer('5c')).toMatchObject({ error: { code: -32602, message: expect.stringMatching(/^[^\n]*tools\/call: params must be an object$/) } });
    server.send(JSON.stringify({ jsonrpc: '2.0', id: '5d', method: 'logging/setLevel' }));
    expect(await server.answer('5d')).toMatchObject({ error: { code: -32602, message: expect.stringMatching(/^[^\n]*logging\/setLevel: params\.level must be one of debug/) } });
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'notes/a.md' } } }));
    expect(await server.answer(6)).toHaveProperty('result.content');
    expect(await server.end()).toBe(0);
  });

  it('a request that breaks MCP\'s schema is answered with its own id when one can be read: -32602 for bad params or _meta, -32600 for a bad envelope', async () => {
    const server = rawStdio();
    server.send(initialize);
    await server.answer('init');
    server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    const call = { method: 'tools/call', params: { name: 'read_file', arguments: { path: 'notes/a.md' } } };
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 7, ...call, params: { ...call.params, _meta: { progressToken: { a: 1 } } } }));
    expect(await server.answer(7)).toMatchObject({ error: { code: -32602, message: 'tools/call: params._meta.progressToken must be a string or a number' } });
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 'eight', ...call, params: { ...call.params, _meta: { progressToken: true } } }));
    expect(await server.answer('eight')).toMatchObject({ error: { code: -32602 } });
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 8.5, ...call }));
    expect(await server.answer(8.5)).toMatchObject({ error: { code: -32600, message: expect.stringContaining('a string or an integer') } });
    server.send(JSON.stringify({ jsonrpc: '1.0', id: 11, method: 'ping' }));
    expect(await server.answer(11)).toMatchObject({ error: { code: -32600, message: expect.stringContaining('"2.0"') } });
    // No id to read (a rounded one is none): null, as JSON-RPC says.
    server.send('{"jsonrpc":"2.0","id":9007199254740993,"method":"ping","params":{"_meta":{"progressToken":true}}}');
    expect(await server.answer(null)).toMatchObject({ error: { code: -32600 } });
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 12, ...call }));
    expect(await server.answer(12)).toHaveProperty('result.content');
    expect(await server.end()).toBe(0);
  });

  it('tools/call arguments holding an integer JSON cannot carry exactly end as INVALID_ARGS, worded as run words it, not run rounded', async () => {
    const server = rawStdio();
    server.send(initialize);
    await server.answer('init');
    server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    server.send('{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"statistics","arguments":{"values":[9007199254740993,1]}}}');
    const refused = await server.answer(9);
    expect(refused).toHaveProperty('result.isError', true);
    expect(JSON.stringify(refused)).toContain('INVALID_ARGS]: the arguments hold the integer 9007199254740993, which JSON cannot carry exactly (it would become 9007199254740992); send it as a string');
    // One elsewhere in the message (its _meta) reaches no tool: the call runs.
    server.send('{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"statistics","arguments":{"values":[2,1]},"_meta":{"trace":9007199254740993}}}');
    expect(await server.answer(10)).toHaveProperty('result.isError', false);
    // A request refused for its params leaves nothing behind: the next with its id, exact, runs.
    server.send('{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"statistics","arguments":{"values":[9007199254740993,1]},"_meta":{"progressToken":{}}}}');
    expect(await server.answer(11)).toMatchObject({ error: { code: -32602 } });
    server.send('{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"statistics","arguments":{"values":[9007199254740992,1]}}}');
    expect(await server.answer(11)).toHaveProperty('result.isError', false);
    expect(await server.end()).toBe(0);
  });

  it('nothing but ping is served before initialize', async () => {
    const server = rawStdio();
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 'early', method: 'tools/call', params: { name: 'read_file', arguments: { path: 'notes/a.md' } } }));
    expect(await server.answer('early')).toMatchObject({ error: { code: -32600, message: expect.stringContaining('send initialize first') } });
    server.send(initialize);
    await server.answer('init');
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 'list', method: 'tools/list' }));
    expect(await server.answer('list')).toHaveProperty('result.tools');
    expect(await server.end()).toBe(0);
  });

  it('a message over 10 MiB is dropped and answered with an error; the server goes on serving', async () => {
    const server = rawStdio();
    server.send(initialize);
    await server.answer('init');
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'x'.repeat(11 * 1024 * 1024) } } }));
    expect(await server.answer(7)).toMatchObject({ error: { code: -32600, message: expect.stringContaining('larger than') } });
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/list' }));
    expect(await server.answer(8)).toHaveProperty('result.tools');
    expect(server.stderr()).toContain('dropped a message of');
    expect(await server.end()).toBe(0);
  });
});

describe('airlock serve over Streamable HTTP', () => {
  let url: URL;
  let stderr: () => string;
  let stop: () => void;
  beforeAll(async () => {
    ({ url, stderr, stop } = await startHttp());
  });
  afterAll(() => {
    stop();
  });

  behaviours(async (options) => {
    const client = makeClient(options);
    const transport = new StreamableHTTPClientTransport(url);
    await client.connect(transport);
    return { client, stderr, close: () => client.close() };
  });

  it('tools/call arguments holding an integer JSON cannot carry exactly end as INVALID_ARGS, not run rounded', async () => {
    // The SDK's client cannot write such an integer: its request text is edited on the way.
    const client = makeClient();
    const exact = (input: string | URL | Request, init?: RequestInit) => fetch(input, typeof init?.body === 'string' ? { ...init, body: init.body.replace('"BIG"', '9007199254740993') } : init);
    await client.connect(new StreamableHTTPClientTransport(url, { fetch: exact }));
    try {
      const refused = (await client.callTool({ name: 'statistics', arguments: { values: ['BIG', 1] } })) as CallToolResult;
      expect(refused.isError).toBe(true);
      expect(text(refused)).toBe('Error [INVALID_ARGS]: the arguments hold the integer 9007199254740993, which JSON cannot carry exactly (it would become 9007199254740992); send it as a string');
      const ok = (await client.callTool({ name: 'statistics', arguments: { values: [2, 1] } })) as CallToolResult;
      expect(ok.isError).toBe(false);
    } finally {
      await client.close();
    }
  });

  it('answers 404 off the /mcp path and refuses a foreign Host header, and a foreign Origin', async () => {
    expect((await fetch(new URL('/other', url))).status).toBe(404);
    // fetch may not set Host, so node:http sends what a DNS-rebinding page would.
    const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    const status = (host: string, origin?: string) => new Promise<number>((resolve, reject) => {
      const req = request(url, { method: 'POST', headers: { host, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(origin === undefined ? {} : { origin }) } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end(initialize);
    });
    expect(await status('evil.example')).toBe(403);
    expect(await status(url.host)).toBe(200);
    // A page elsewhere that a browser lets post here names its own origin (MCP: servers must check it).
    expect(await status(url.host, 'http://evil.example')).toBe(403);
    expect(await status(url.host, 'null')).toBe(403);
    expect(await status(url.host, url.origin)).toBe(200);
  });
});

describe('airlock serve --http: what a client names reaches the log cut short', () => {
  it('a tool name of 100,000 escape characters costs the operator\'s stderr a bounded line', async () => {
    const { url, stderr, stop } = await startHttp();
    try {
      const client = makeClient();
      await client.connect(new StreamableHTTPClientTransport(url));
      const name = '\u001b'.repeat(100_000);
      const before = stderr().length;
      await client.callTool({ name, arguments: {} }).catch(() => undefined);
      // The call's own lines ("started", then its outcome) are written before its answer.
      const lines = stderr().slice(before).split('\n').filter((line) => line.length > 0);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(line.length, line.slice(0, 80)).toBeLessThan(2000);
      expect(lines.join('\n')).toContain('… (100000 chars)');
      await client.close();
    } finally {
      stop();
    }
  });
});

describe('airlock serve --http: sessions and tenancy', () => {
  const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  /** A raw initialize POST: the status, headers and JSON-RPC body a refused client sees. */
  const rawInitialize = async (url: URL, headers: Record<string, string> = {}) => {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: initialize });
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body: response.headers.get('content-type')?.includes('json') ? ((await response.json()) as { error?: { code: number; message: string } }) : await response.text() };
  };
  const connect = async (url: URL, headers: Record<string, string> = {}) => {
    const client = makeClient();
    const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
    await client.connect(transport);
    return { client, transport };
  };
  /** A session opened with raw HTTP: `post` sends a message on it (as JSON-RPC 2.0 unless `asIs`). */
  const rawSession = async (url: URL) => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
    const opened = await fetch(url, { method: 'POST', headers, body: initialize });
    const session = opened.headers.get('mcp-session-id')!;
    await opened.text();
    const post = (message: object, envelope = true) => fetch(url, { method: 'POST', headers: { ...headers, 'mcp-session-id': session }, body: JSON.stringify(envelope ? { jsonrpc: '2.0', ...message } : message) });
    return { session, post };
  };
  const tenantOf = async (client: Client) => {
    const result = (await client.callTool({ name: 'whoami', arguments: {} })) as CallToolResult;
    return (result.structuredContent ?? JSON.parse(text(result))) as { tenant: string };
  };

  it('a body that is not UTF-8 is refused 400 with -32700, never decoded into an argument with U+FFFD', async () => {
    const { url, stop } = await startHttp();
    try {
      const { session } = await rawSession(url);
      const body = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"whoami","arguments":{"x":"a'), Buffer.from([0xff]), Buffer.from('b"}}}')]);
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', 'mcp-session-id': session }, body });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: { code: -32700, message: expect.stringContaining('not valid UTF-8') } });
    } finally {
      stop();
    }
  });

  it('bodies held half-sent by one tenant\'s connections cost the server at most that tenant\'s share of the body budget: past it they are refused 503, and other tenants are served', async () => {
    const { url, stop } = await startHttp(['--tenant-header', 'X-Tenant']);
    const sockets: Socket[] = [];
    try {
      // Twenty bodies of 4 MiB less a byte, each held one byte short: 80 MiB, past a tenant's 16 MiB.
      const size = 4 * 1024 * 1024;
      let refused = 0;
      let firstRefusal: () => void = () => undefined;
      const someRefused = new Promise<void>((resolve) => (firstRefusal = resolve));
      for (let index = 0; index < 20; index += 1) {
        const socket = connectSocket(Number(url.port), '127.0.0.1');
        socket.on('error', () => undefined);
        let answer = '';
        socket.on('data', (chunk: Buffer) => {
          answer += chunk.toString();
          if (!answer.startsWith('HTTP/1.1 503') || !answer.includes('retry in a moment')) return;
          expect(answer).toContain('too many request bodies in progress (at most 16 MiB for a tenant, 64 MiB in all): retry in a moment');
          answer = '';
          refused += 1;
          firstRefusal();
        });
        socket.write(`POST /mcp HTTP/1.1\r\nHost: ${url.host}\r\nX-Tenant: evil\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${size}\r\n\r\n`);
        socket.write(Buffer.alloc(size - 1, 0x20));
        sockets.push(socket);
      }
      await someRefused;
      expect(refused).toBeGreaterThan(0);
      // Another tenant is served meanwhile, a large body too.
      expect((await rawInitialize(url, { 'x-tenant': 'victim' })).status).toBe(200);
      const large = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-tenant': 'victim' };
      expect((await fetch(url, { method: 'POST', headers: large, body: `${' '.repeat(3 * 1024 * 1024)}${initialize}` })).status).toBe(200);
      // The held bodies' bytes go back once their connections close.
      for (const socket of sockets) socket.destroy();
      await vi.waitFor(async () => {
        const big = await fetch(url, { method: 'POST', headers: { ...large, 'x-tenant': 'evil' }, body: `${' '.repeat(3 * 1024 * 1024)}${initialize}` });
        expect(big.status).toBe(200);
      });
    } finally {
      for (const socket of sockets) socket.destroy();
      stop();
    }
  });

  it('by default every session is one tenant: opening more sessions buys no bigger share', async () => {
    const { url, stop } = await startHttp();
    try {
      const first = await connect(url);
      const second = await connect(url);
      expect((await tenantOf(first.client)).tenant).toBe('default');
      expect((await tenantOf(second.client)).tenant).toBe('default');
      await Promise.all([first.client.close(), second.client.close()]);
    } finally {
      stop();
    }
  });

  it('--tenant-header: the operator-named header sets the tenant; missing or switched, the request is refused', async () => {
    const { url, stop } = await startHttp(['--tenant-header', 'X-Tenant']);
    try {
      const acme = await connect(url, { 'X-Tenant': 'acme' });
      const globex = await connect(url, { 'X-Tenant': 'globex' });
      expect((await tenantOf(acme.client)).tenant).toBe('acme');
      expect((await tenantOf(globex.client)).tenant).toBe('globex');

      const missing = await rawInitialize(url);
      expect(missing).toMatchObject({ status: 400, body: { error: { code: -32600, message: expect.stringContaining('missing x-tenant header') } } });
      expect((await rawInitialize(url, { 'X-Tenant': 'bad tenant!' })).status).toBe(400);

      // A session keeps the tenant it opened with: another value on its id is refused.
      const switched = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': acme.transport.sessionId!, 'mcp-protocol-version': '2025-06-18', 'x-tenant': 'globex' }, body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }) });
      expect(switched.status).toBe(403);
      expect(await switched.json()).toMatchObject({ jsonrpc: '2.0', error: { message: expect.stringContaining('does not match') } });
      await Promise.all([acme.client.close(), globex.client.close()]);
    } finally {
      stop();
    }
  });

  it('a request without a session id that is not an initialize is told so, and takes no place, even when the server is full', async () => {
    const { url, stop } = await startHttp(['--max-sessions', '1']);
    try {
      const post = (body: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body });
      for (let i = 0; i < 2; i += 1) {
        const lost = await post(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list' }));
        expect(lost.status).toBe(400);
        expect(await lost.json()).toMatchObject({ error: { code: -32000, message: 'missing Mcp-Session-Id header: POST an initialize request first to open a session' } });
      }
      expect((await fetch(url)).status).toBe(400);
      // The one place is still free for an initialize, and then taken.
      expect((await rawInitialize(url)).status).toBe(200);
      const full = await post(JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/list' }));
      expect(full.status).toBe(400);
      expect((await rawInitialize(url)).status).toBe(503);
    } finally {
      stop();
    }
  });

  it('--max-sessions and --max-sessions-per-tenant refuse new sessions with 503 and 429, and a closed session frees its place', async () => {
    const { url, stop } = await startHttp(['--tenant-header', 'X-Tenant', '--max-sessions', '3', '--max-sessions-per-tenant', '2']);
    try {
      const first = await connect(url, { 'X-Tenant': 'acme' });
      await connect(url, { 'X-Tenant': 'acme' });
      const perTenant = await rawInitialize(url, { 'X-Tenant': 'acme' });
      expect(perTenant).toMatchObject({ status: 429, body: { error: { code: -32000, message: expect.stringContaining('tenant "acme" already holds 2 sessions') } } });

      await connect(url, { 'X-Tenant': 'globex' });
      const full = await rawInitialize(url, { 'X-Tenant': 'initech' });
      expect(full).toMatchObject({ status: 503, retryAfter: '600', body: { error: { code: -32000, message: expect.stringContaining('too many sessions: 3 are open') } } });
      await expect(connect(url, { 'X-Tenant': 'initech' })).rejects.toThrow();

      // DELETE closes a session; its place (and acme's) is free again.
      await first.transport.terminateSession();
      const again = await connect(url, { 'X-Tenant': 'acme' });
      expect((await tenantOf(again.client)).tenant).toBe('acme');
    } finally {
      stop();
    }
  });

  it('with --tenant-header, one tenant holds at most a tenth of --max-sessions by default: it cannot lock the other tenants out', async () => {
    const { url, stop } = await startHttp(['--tenant-header', 'X-Tenant', '--max-sessions', '20']);
    try {
      await connect(url, { 'X-Tenant': 'mallory' });
      await connect(url, { 'X-Tenant': 'mallory' });
      const third = await rawInitialize(url, { 'X-Tenant': 'mallory' });
      expect(third).toMatchObject({ status: 429, body: { error: { message: expect.stringContaining('tenant "mallory" already holds 2 sessions (--max-sessions-per-tenant 2)') } } });
      const alice = await connect(url, { 'X-Tenant': 'alice' });
      expect((await tenantOf(alice.client)).tenant).toBe('alice');
    } finally {
      stop();
    }
  });

  it('a call cancelled with notifications/cancelled ends its POST stream unanswered, and its session idles out; its id is not taken over meanwhile', async () => {
    const { url, stderr, stop } = await startHttp(['--idle-timeout', '1']);
    try {
      const { session, post } = await rawSession(url);
      expect((await post({ method: 'notifications/initialized' })).status).toBe(202);
      const call = await post({ id: 2, method: 'tools/call', params: { name: 'busy_exclusive', arguments: { ms: 20_000 } } });
      expect(call.headers.get('content-type')).toContain('text/event-stream');
      await expect.poll(() => stderr(), { timeout: 10_000 }).toContain('busy_exclusive started');
      // An id in progress is not taken over by a second request: refused before the SDK sees it.
      const repeated = await post({ id: 2, method: 'tools/list' });
      expect(repeated.status).toBe(400);
      expect(await repeated.json()).toEqual({ jsonrpc: '2.0', id: 2, error: { code: -32600, message: 'request id 2 is in use by a request in progress: an id may not be reused in a session' } });
      expect((await post({ method: 'notifications/cancelled', params: { requestId: 2, reason: 'the user gave up' } })).status).toBe(202);
      // Read to its end: without the fix the SDK kept it open with keep-alives, for good.
      const streamed = await call.text();
      expect(streamed).not.toContain('"result"');
      await expect.poll(() => stderr(), { timeout: 10_000 }).toContain(`session ${session} (default) closed after 1 s idle`);
      expect(stderr()).toMatch(/busy_exclusive → ABORTED/);
    } finally {
      stop();
    }
  });

  it('a cancel in a batch ends its stream too; a cancel of id 0, which the SDK ignores, leaves the call answered and its id in use; an id the SDK refused is free', async () => {
    const { url, stderr, stop } = await startHttp(['--idle-timeout', '1']);
    try {
      const { session, post: postMessage } = await rawSession(url);
      // Sent as given: a batch, or an envelope of another JSON-RPC version.
      const post = (message: object) => postMessage(message, false);
      const started = () => stderr().split('busy_exclusive started').length - 1;
      await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
      const cancelledInBatch = await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'busy_exclusive', arguments: { ms: 20_000 } } });
      await expect.poll(started, { timeout: 10_000 }).toBe(1);
      expect((await post([{ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } }])).status).toBe(202);
      expect(await cancelledInBatch.text()).not.toContain('"result"');
      const zero = await post({ jsonrpc: '2.0', id: 0, method: 'tools/call', params: { name: 'busy_exclusive', arguments: { ms: 1500 } } });
      await expect.poll(started, { timeout: 10_000 }).toBe(2);
      await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 0 } });
      expect((await post({ jsonrpc: '2.0', id: 0, method: 'tools/list' })).status).toBe(400);
      expect(await zero.text()).toContain('"result"');
      // Refused whole by the SDK, unanswered: its id does not stay taken.
      expect((await post({ jsonrpc: '1.0', id: 7, method: 'tools/list' })).status).toBe(400);
      const again = await post({ jsonrpc: '2.0', id: 7, method: 'tools/list' });
      expect(again.status).toBe(200);
      expect(await again.text()).toContain('"tools"');
      await expect.poll(() => stderr(), { timeout: 10_000 }).toContain(`session ${session} (default) closed after 1 s idle`);
    } finally {
      stop();
    }
  });

  it('--idle-timeout closes a session nobody uses (its id then gets 404), never one with a call in flight', async () => {
    const { url, stderr, stop } = await startHttp(['--idle-timeout', '1']);
    try {
      const busy = await connect(url);
      const idle = await connect(url);
      const idleId = idle.transport.sessionId!;
      // The busy session's call outlasts the timeout several times over, and still answers.
      const call = busy.client.callTool({ name: 'busy_exclusive', arguments: { ms: 3000 } }) as Promise<CallToolResult>;
      await expect.poll(() => stderr(), { timeout: 10_000 }).toContain(`session ${idleId} (default) closed after 1 s idle`);
      const stale = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': idleId, 'mcp-protocol-version': '2025-06-18' }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
      expect(stale.status).toBe(404);
      expect(await stale.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32001, message: expect.stringContaining('expired after 1 s idle') } });
      expect((await call).isError).toBe(false);
      expect(stderr()).not.toContain(`session ${busy.transport.sessionId} (default) closed`);
      // A new session works at once.
      const fresh = await connect(url);
      expect((await tenantOf(fresh.client)).tenant).toBe('default');
    } finally {
      stop();
    }
  });

  it.each([
    [['--http', '0', '--idle-timeout', '0'], /--idle-timeout must be a whole number from 1 to 86400/],
    [['--http', '0', '--max-sessions', 'many'], /--max-sessions must be a whole number/],
    [['--http', '0', '--tenant', 'a', '--tenant-header', 'X-Tenant'], /--tenant and --tenant-header exclude each other/],
    [['--http', '0', '--tenant-header', 'Mcp-Session-Id'], /--tenant-header must be an HTTP header name/],
    [['--max-sessions', '5'], /--max-sessions applies to --http only/],
  ])('bad session flags exit 2 with one line: %j', async (args, message) => {
    const run = await airlock(['serve', '--plugins', 'examples/plugins', ...args]);
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toMatch(message);
  });

  it('--help documents the tenancy and session flags', async () => {
    const run = await airlock(['serve', '--help']);
    expect(run.stdout).toMatch(/--tenant-header <h>[\s\S]*--max-sessions <n>[\s\S]*--max-sessions-per-tenant[\s\S]*--idle-timeout <s>/);
    expect(run.stdout).toContain('default: "default", one tenant for all');
  });
});

describe('airlock serve: what plugins log reaches the client as MCP logging notifications', () => {
  /** A client that keeps every notifications/message it receives. */
  const loggingClient = () => {
    const client = makeClient();
    const received: LoggingMessageNotification['params'][] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void received.push(notification.params));
    return { client, received };
  };

  it('tools/list leaves out a tool the manifest denies outright, as an unknown tool\'s answer does', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'serve', '--plugins', 'test/fixtures/gate/plugins/four'], cwd: ROOT, stderr: 'pipe' });
    const client = makeClient();
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(['alpha', 'delta', 'gamma']);
      const denied = (await client.callTool({ name: 'beta', arguments: {} })) as CallToolResult;
      expect(denied.isError).toBe(true);
      expect(text(denied)).toContain('PERMISSION_DENIED');
    } finally {
      await client.close();
    }
  });

  it('over stdio: each console line and log request of a call, in order, and logging/setLevel filters them', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'serve', '--plugins', relayDir], cwd: ROOT, stderr: 'pipe' });
    const { client, received } = loggingClient();
    await client.connect(transport);
    try {
      expect(client.getServerCapabilities()?.logging).toEqual({});
      const result = (await client.callTool({ name: 'interleave', arguments: {} })) as CallToolResult;
      expect(result.isError).toBe(false);
      expect(received).toEqual([
        { level: 'info', logger: 'interleave', data: 'one' },
        { level: 'info', logger: 'interleave', data: 'two' },
        { level: 'warning', logger: 'interleave', data: 'three' },
        { level: 'error', logger: 'interleave', data: 'four {"n":4}' },
        { level: 'info', logger: 'interleave', data: 'five' },
        { level: 'debug', logger: 'interleave', data: 'six \\x1b[2J' },
        { level: 'error', logger: 'interleave', data: 'seven' },
      ]);
      // Nothing of the log reaches what the model reads.
      expect(JSON.stringify(result.content)).not.toContain('seven');
      received.length = 0;
      await client.setLoggingLevel('error');
      await client.callTool({ name: 'interleave', arguments: {} });
      expect(received.map((params) => params.data)).toEqual(['four {"n":4}', 'seven']);
      // A level the protocol does not know: invalid params (-32602) that name the levels, not an internal error.
      await expect(client.setLoggingLevel('loud' as 'error')).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('params.level must be one of debug, info') });
    } finally {
      await client.close();
    }
  });

  it('over Streamable HTTP: each session gets its own calls\' lines at its own level', async () => {
    const server = spawn(process.execPath, [BIN, 'serve', '--http', '0', '--plugins', relayDir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    try {
      await new Promise<void>((resolve, reject) => {
        server.stderr!.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          if (/listening on http:\/\/\S+/.test(stderr)) resolve();
        });
        server.once('exit', (code) => reject(new Error(`airlock serve exited (${code}): ${stderr}`)));
      });
      const url = new URL(/listening on (http:\/\/\S+)/.exec(stderr)![1]!);
      const quiet = loggingClient();
      const loud = loggingClient();
      await quiet.client.connect(new StreamableHTTPClientTransport(url));
      await loud.client.connect(new StreamableHTTPClientTransport(url));
      await quiet.client.setLoggingLevel('warning');
      await Promise.all([
        quiet.client.callTool({ name: 'chatty', arguments: { lines: 1 } }),
        loud.client.callTool({ name: 'chatty', arguments: { lines: 3 } }),
      ]);
      expect(quiet.received).toEqual([{ level: 'warning', logger: 'chatty', data: 'line 0 {"i":0}' }]);
      expect(loud.received.map((params) => `${params.level} ${String(params.data)}`)).toEqual(['info from the console', 'warning line 0 {"i":0}', 'warning line 1 {"i":1}', 'warning line 2 {"i":2}']);
      await Promise.all([quiet.client.close(), loud.client.close()]);
    } finally {
      server.kill('SIGTERM');
    }
  });
});
