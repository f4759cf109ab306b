// airlock serve: sandboxed plugins to any MCP client, over stdio (default) or
// Streamable HTTP on a loopback port. stdout is the protocol; logs go to stderr.
import type { Sandbox } from '@airlock/sandbox';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { mcpServerEntry } from '../support/bin-path.js';
import { loadCapabilities } from '../support/load-capabilities.js';
import { createMcpSession, type McpSessionOptions } from '../support/mcp-server.js';
import { openSandbox } from '../support/open-engine.js';
import { withUsage } from '../support/parse-command-args.js';
import { visible } from '../support/terminal-text.js';
import { plural } from '../support/plural.js';
import { UsageError } from '../support/usage-error.js';

export const SERVE_HELP = `Usage: airlock serve --plugins <dir>... [options]

Serves the plugins' tools over the Model Context Protocol. tools/list is the
model-facing projection (plus outputSchema); tools/call runs through the permission
gate, the sandbox and its limits. Failures are isError results the model can read.

Options:
  --plugins <dir>     a plugin folder or a folder of plugin folders (repeatable)
  --http <port>       Streamable HTTP on 127.0.0.1:<port>/mcp instead of stdio (0: any free port)
  --tenant <id>       one tenant for every session (default: one tenant per MCP session)
  --approve <tool>    answer "ask" with yes for this tool (repeatable)
  --approve-all       answer every "ask" with yes
  --capabilities <m>  an ES module whose default export names host functions plugins may be granted
  -h, --help          show this help

"ask" goes to the client as an elicitation when it supports one; otherwise the call
ends as APPROVAL_UNAVAILABLE.

Example (an MCP client's configuration):
  { "mcpServers": { "airlock": ${mcpServerEntry(['serve', '--plugins', '/path/to/plugins'])} } }`;

function log(line: string): void {
  process.stderr.write(`airlock serve: ${visible(line)}\n`);
}

export async function serveCommand(argv: string[]): Promise<number> {
  const { values } = withUsage('serve', () => parseArgs({ args: argv, allowPositionals: false, strict: true, options: {
    plugins: { type: 'string', multiple: true },
    http: { type: 'string' },
    tenant: { type: 'string' },
    approve: { type: 'string', multiple: true },
    'approve-all': { type: 'boolean' },
    capabilities: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  } }));
  if (values.help === true) {
    process.stdout.write(`${SERVE_HELP}\n`);
    return 0;
  }
  const port = values.http === undefined ? undefined : Number(values.http);
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port <= 65535)) throw new UsageError('--http must be a port number from 0 to 65535');
  if (values.tenant !== undefined && !/^[\w.:@-]{1,128}$/.test(values.tenant)) throw new UsageError('--tenant must be 1-128 letters, digits or . _ : @ -');
  if ((values.plugins ?? []).length === 0) throw new UsageError('--plugins <dir> is required (see "airlock serve --help")');

  const sandbox = await openSandbox(values.plugins ?? [], await loadCapabilities(values.capabilities));
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  const session = (tenant: string): Omit<McpSessionOptions, 'tenant'> & { tenant: string } => ({
    sandbox,
    tenant: values.tenant ?? tenant,
    version: pkg.version,
    approve: new Set(values.approve ?? []),
    approveAll: values['approve-all'] === true,
    log,
  });
  const tools = sandbox.tools().map((tool) => tool.name);
  log(`${plural(tools.length, 'tool')} from ${plural(sandbox.plugins().length, 'plugin')}: ${tools.join(', ')}`);

  if (port === undefined) await serveStdio(sandbox, session);
  else await serveHttp(sandbox, session, port);
  return 0;
}

async function serveStdio(sandbox: Sandbox, session: (tenant: string) => McpSessionOptions): Promise<void> {
  const server = createMcpSession(session(`mcp-${randomUUID()}`));
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(new StdioServerTransport());
  log('serving over stdio');
  await Promise.race([closed, stopSignal()]);
  await server.close().catch(() => undefined);
  await sandbox.close();
}

async function serveHttp(sandbox: Sandbox, session: (tenant: string) => McpSessionOptions, port: number): Promise<void> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  let allowedHosts: string[] = [];
  const http: HttpServer = createServer((req, res) => {
    void (async () => {
      if ((req.url ?? '').split('?')[0] !== '/mcp') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: the MCP endpoint is /mcp\n');
        return;
      }
      const header = req.headers['mcp-session-id'];
      const sessionId = typeof header === 'string' ? header : undefined;
      let transport = sessionId === undefined ? undefined : transports.get(sessionId);
      if (transport === undefined) {
        if (sessionId !== undefined) {
          res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'unknown session' }, id: null }));
          return;
        }
        // A new session: its own MCP server, engine and tenant.
        const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            transports.set(id, created);
          },
          onsessionclosed: (id) => {
            transports.delete(id);
          },
          // Only this loopback address may be named in Host: no DNS rebinding.
          enableDnsRebindingProtection: true,
          allowedHosts,
        });
        created.onclose = () => {
          if (created.sessionId !== undefined) transports.delete(created.sessionId);
        };
        await createMcpSession(session(`mcp-${randomUUID()}`)).connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res);
    })().catch((error: unknown) => {
      log(`request failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, '127.0.0.1', () => resolve());
  });
  const actual = (http.address() as AddressInfo).port;
  allowedHosts = [`127.0.0.1:${actual}`, `localhost:${actual}`];
  log(`listening on http://127.0.0.1:${actual}/mcp`);
  await stopSignal();
  for (const transport of transports.values()) await transport.close().catch(() => undefined);
  await new Promise<void>((resolve) => http.close(() => resolve()));
  await sandbox.close();
}

function stopSignal(): Promise<void> {
  return new Promise((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve());
  });
}
