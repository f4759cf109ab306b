// airlock serve driven by the official MCP SDK Client, over stdio and Streamable HTTP.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pluginFolder } from './support/plugin-harness.js';
import { BIN, ROOT } from './support/run-cli.js';

let busyDir: string;
beforeAll(async () => {
  busyDir = await pluginFolder('plugins/busy.js', { name: 'busy', limits: { cpuMs: 10_000, timeoutMs: 20_000 } });
});
afterAll(async () => {
  await rm(busyDir, { recursive: true, force: true });
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
    const { client, stderr, close } = await connect();
    try {
      const controller = new AbortController();
      const pending = client.callTool({ name: 'busy_exclusive', arguments: { ms: 8000 } }, undefined, { signal: controller.signal });
      pending.catch(() => undefined); // asserted below
      // The signal: the server logged that the call started.
      await expect.poll(() => stderr(), { timeout: 10_000 }).toMatch(/busy_exclusive started/);
      const started = performance.now();
      controller.abort();
      await expect(pending).rejects.toThrow();
      const after = (await client.callTool({ name: 'slugify', arguments: { text: 'Next' } })) as CallToolResult;
      expect(text(after)).toBe('"next"');
      // The 8 s body did not hold the server: the next call came back well before it would have ended.
      expect(performance.now() - started).toBeLessThan(5000);
      await expect.poll(() => stderr(), { timeout: 5000 }).toMatch(/busy_exclusive → ABORTED/);
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
    try {
      const result = (await client.callTool({ name: 'delete_file', arguments: { path: 'notes/old.md' } })) as CallToolResult;
      expect(result.isError).toBe(isError);
      if (isError) expect(text(result)).toContain('PERMISSION_DENIED');
      else expect(result.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('"staged":"delete"') });
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

describe('airlock serve over Streamable HTTP', () => {
  let server: ChildProcess;
  let url: URL;
  let stderr = '';
  beforeAll(async () => {
    server = spawn(process.execPath, [BIN, 'serve', '--http', '0', '--plugins', 'examples/plugins', '--plugins', busyDir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const deadline = Date.now() + 20_000;
    while (!/listening on http:\/\/\S+/.test(stderr) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    url = new URL(/listening on (http:\/\/\S+)/.exec(stderr)![1]!);
  });
  afterAll(() => {
    server.kill('SIGTERM');
  });

  behaviours(async (options) => {
    const client = makeClient(options);
    const transport = new StreamableHTTPClientTransport(url);
    await client.connect(transport);
    return { client, stderr: () => stderr, close: () => client.close() };
  });

  it('answers 404 off the /mcp path and refuses a foreign Host header', async () => {
    expect((await fetch(new URL('/other', url))).status).toBe(404);
    // fetch may not set Host, so node:http sends what a DNS-rebinding page would.
    const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    const status = (host: string) => new Promise<number>((resolve, reject) => {
      const req = request(url, { method: 'POST', headers: { host, 'content-type': 'application/json', accept: 'application/json, text/event-stream' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end(initialize);
    });
    expect(await status('evil.example')).toBe(403);
    expect(await status(url.host)).toBe(200);
  });
});
