// airlock serve: sandboxed plugins to any MCP client, over stdio (default) or
// Streamable HTTP on a loopback port. stdout is the protocol; logs go to stderr.
import { ToolRegistry } from '@airlock/core';
import type { Sandbox } from '@airlock/sandbox';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { BodyBudget, UnreadResponses } from '../support/http-memory.js';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { mcpServerEntry } from '../support/bin-path.js';
import { HOST_CAPABILITY_FLAGS, HOST_CAPABILITY_HELP, standardOptions } from '../support/host-capabilities.js';
import { loadCapabilities } from '../support/load-capabilities.js';
import { CallsInFlight, createMcpSession, type McpSessionOptions } from '../support/mcp-server.js';
import { MAX_MESSAGE_BYTES, MessageLines } from '../support/message-lines.js';
import { DEBUG_HELP, debugEnabled, debugOnError } from '../support/debug-output.js';
import { codeToolClash, openSandbox } from '../support/open-engine.js';
import { EXECUTORS_FLAG, EXECUTORS_HELP, executorsTarget } from '../support/executors-flag.js';
import { withUsage } from '../support/parse-command-args.js';
import { escapeRawInJson, visible } from '../support/terminal-text.js';
import { plural } from '../support/plural.js';
import { stdioRefusal } from '../support/stdio-refusal.js';
import { RoundedRequests } from '../support/rounded-requests.js';
import { cancelledRequestIds, RequestIdsInFlight, requestIdsIn } from '../support/request-ids.js';
import { SessionTable, type SessionLimits } from '../support/session-table.js';
import { UsageError } from '../support/usage-error.js';
import { unknownApprovals } from '../support/approvers.js';
import { logName } from '../support/log-name.js';

export const SERVE_HELP = `Usage: airlock serve --plugins <dir>... [options]

Serves the plugins' tools over the Model Context Protocol. tools/list is the
model-facing projection (plus outputSchema); tools/call runs through the permission
gate, the sandbox and its limits. Failures are isError results the model can read.

Options:
  --plugins <dir>     a plugin folder or a folder of plugin folders (repeatable)
  --http <port>       Streamable HTTP on 127.0.0.1:<port>/mcp instead of stdio (0: any free port)
  --tenant <id>       the tenant of every session (default: "default", one tenant for all)
  --tenant-header <h> with --http: each session's tenant is this request header's value
                      (e.g. X-Tenant), set by a trusted proxy in front; a session keeps
                      the tenant it opened with
  --max-sessions <n>  with --http: most sessions open at once (default 100); past it a
                      new session gets HTTP 503 and a JSON-RPC error
  --max-sessions-per-tenant <n>
                      with --http: most sessions one tenant may hold (default: a tenth of
                      --max-sessions with --tenant-header, else --max-sessions); past it HTTP 429
  --idle-timeout <s>  with --http: close a session after this many seconds with no request
                      in flight (default 600); its id then gets HTTP 404, so the client
                      starts a new session
  --approve <tool>    answer "ask" with yes for this tool (repeatable)
  --approve-all       answer every "ask" with yes
  --code-mode         serve one tool, run_code: the client's model writes a program that calls
                      the plugins' tools, each call through the permission gate (docs/code-mode.md)
  --capabilities <m>  an ES module whose default export names host functions plugins may be granted
${HOST_CAPABILITY_HELP}
${EXECUTORS_HELP}
${DEBUG_HELP}
  -h, --help          show this help

"ask" goes to the client as an elicitation when it supports one; otherwise the call
ends as APPROVAL_UNAVAILABLE. What a call's plugin logs (its console and the log
capability) goes to the client as MCP logging notifications on that call's request, in
the order it was written; logging/setLevel sets the lowest level sent. SIGTERM or
Ctrl-C cancels the calls in progress, answers each (ABORTED), then exits 0; a repeat
of either signal meanwhile does not cut that short (SIGKILL does).

Example (an MCP client's configuration):
  { "mcpServers": { "airlock": ${mcpServerEntry(['serve', '--plugins', '/path/to/plugins'])} } }`;

/**
 * Standard output as the protocol's channel: each JSON-RPC line with the characters
 * JSON.stringify leaves raw (C1 controls, bidi and invisible ones) as \u escapes, as every
 * other JSON the CLI prints, so a person reading the stream on a terminal sees them as text.
 * The SDK's transport writes one whole message per write.
 */
const protocolOutput = new Writable({
  write(chunk: Buffer | string, _encoding, done) {
    process.stdout.write(escapeRawInJson(chunk.toString()), done);
  },
});
// A failed write is standard output's own error too, which bin.ts answers (a closed pipe: exit
// 141, quietly; anything else: one line, exit 2); unheard here, it ended the server with a stack trace.
protocolOutput.on('error', () => undefined);

/** One JSON-RPC message of ours on standard output, escaped as protocolOutput escapes the SDK's. */
function writeMessage(message: Record<string, unknown>): void {
  process.stdout.write(`${escapeRawInJson(JSON.stringify(message))}\n`);
}

function log(line: string): void {
  process.stderr.write(`airlock serve: ${visible(line)}\n`);
}

export async function serveCommand(argv: string[]): Promise<number> {
  const { values } = withUsage('serve', () => parseArgs({ args: argv, allowPositionals: false, strict: true, options: {
    plugins: { type: 'string', multiple: true },
    http: { type: 'string' },
    tenant: { type: 'string' },
    'tenant-header': { type: 'string' },
    'max-sessions': { type: 'string' },
    'max-sessions-per-tenant': { type: 'string' },
    'idle-timeout': { type: 'string' },
    approve: { type: 'string', multiple: true },
    'approve-all': { type: 'boolean' },
    'code-mode': { type: 'boolean' },
    capabilities: { type: 'string' },
    ...HOST_CAPABILITY_FLAGS,
    ...EXECUTORS_FLAG,
    debug: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  } }));
  if (values.help === true) {
    process.stdout.write(`${SERVE_HELP}\n`);
    return 0;
  }
  const port = values.http === undefined ? undefined : /^\d{1,5}$/.test(values.http.trim()) ? Number(values.http) : NaN;
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port <= 65535)) throw new UsageError('--http must be a port number from 0 to 65535');
  if (values.tenant !== undefined && !TENANT.test(values.tenant)) throw new UsageError('--tenant must be 1-128 letters, digits or . _ : @ -');
  if (values['code-mode'] === true && values.executors !== undefined) throw new UsageError('--code-mode cannot run with --executors: programs run in a sandbox of their own that no executor serves (every program would end ABORTED_BEFORE_DISPATCH)');
  const executors = executorsTarget(values);
  const httpOnly = (['tenant-header', 'max-sessions', 'max-sessions-per-tenant', 'idle-timeout'] as const).find((flag) => values[flag] !== undefined);
  if (httpOnly !== undefined && port === undefined) throw new UsageError(`--${httpOnly} applies to --http only (over stdio there is one session)`);
  if (values.tenant !== undefined && values['tenant-header'] !== undefined) throw new UsageError('--tenant and --tenant-header exclude each other: one fixed tenant, or one per header value');
  const tenantHeader = values['tenant-header'];
  if (tenantHeader !== undefined && (!/^[!#$%&'*+.^`|~\w-]{1,64}$/.test(tenantHeader) || RESERVED_HEADERS.has(tenantHeader.toLowerCase()))) {
    throw new UsageError('--tenant-header must be an HTTP header name (letters, digits, -) that HTTP or MCP does not already use');
  }
  const maxSessions = count('--max-sessions', values['max-sessions'], 100, 100_000);
  const limits: SessionLimits = {
    maxSessions,
    // One tenant per header value: by default none may hold more than a tenth of the sessions,
    // so one cannot take every session and lock the others out. With one tenant, all are its.
    maxPerTenant: count('--max-sessions-per-tenant', values['max-sessions-per-tenant'], tenantHeader === undefined ? maxSessions : Math.max(1, Math.floor(maxSessions / 10)), maxSessions),
    idleMs: count('--idle-timeout', values['idle-timeout'], 600, 86_400) * 1000,
  };
  if ((values.plugins ?? []).length === 0) throw new UsageError('--plugins <dir> is required (see "airlock serve --help")');

  const sandbox = await openSandbox(values.plugins ?? [], await loadCapabilities(values.capabilities), standardOptions(values), executors);
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  const unapprovable = unknownApprovals(values.approve ?? [], sandbox.tools().map((tool) => tool.name));
  if (unapprovable !== undefined) {
    await sandbox.close();
    throw new UsageError(unapprovable);
  }
  // Said at start-up, before listening: over HTTP each session builds its engine, and a clash
  // found there answered every session with HTTP 500 (an outside tester's find).
  const clash = values['code-mode'] === true ? codeToolClash(sandbox.tools().map((tool) => tool.name)) : undefined;
  if (clash !== undefined) {
    await sandbox.close();
    throw new UsageError(clash);
  }
  const registry = new ToolRegistry(sandbox.tools());
  const onError = debugOnError(debugEnabled(values.debug));
  // SIGTERM or Ctrl-C: calls in progress are cancelled and answered, then the server closes.
  const stopping = new AbortController();
  const calls = new CallsInFlight();
  const session = (tenant: string): McpSessionOptions => ({
    sandbox,
    registry,
    tenant,
    version: pkg.version,
    approve: new Set(values.approve ?? []),
    approveAll: values['approve-all'] === true,
    codeMode: values['code-mode'] === true,
    log,
    calls,
    stopping: stopping.signal,
    ...(onError === undefined ? {} : { onError }),
  });
  const tools = sandbox.tools().map((tool) => tool.name);
  log(`${plural(tools.length, 'tool')} from ${plural(sandbox.plugins().length, 'plugin')}: ${tools.join(', ')}${values['code-mode'] === true ? ' (Code Mode: served as run_code programs)' : ''}`);

  const fixedTenant = values.tenant ?? DEFAULT_TENANT;
  const stop = { stopping, calls };
  if (port === undefined) await serveStdio(sandbox, session(fixedTenant), stop);
  else await serveHttp(sandbox, session, port, limits, tenantHeader === undefined ? { fixed: fixedTenant } : { header: tenantHeader.toLowerCase() }, stop);
  return 0;
}

// Tenancy is the operator's decision, never the client's: by default every session is one
// tenant, so opening more sessions never buys a bigger share of the pool.
const DEFAULT_TENANT = 'default';
const TENANT = /^[\w.:@-]{1,128}$/;
const RESERVED_HEADERS = new Set(['host', 'content-type', 'content-length', 'accept', 'authorization', 'cookie', 'connection', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id']);

/** A positive whole number flag, `fallback` when absent. */
function count(flag: string, raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < 1 || value > max) throw new UsageError(`${flag} must be a whole number from 1 to ${max}`);
  return value;
}

/** How the server stops: `stopping` aborts the calls in progress, `calls` says when all are answered. */
interface Stop {
  readonly stopping: AbortController;
  readonly calls: CallsInFlight;
}

/** On SIGTERM or Ctrl-C: cancels the calls in progress and resolves once each is answered. */
async function stopped(stop: Stop): Promise<void> {
  const signal = await stopSignal();
  log(`${signal}: cancelling the calls in progress, answering them, then closing`);
  stop.stopping.abort();
  await stop.calls.drained();
  // The last answer is written a moment after its call resolves.
  await new Promise((resolve) => setImmediate(resolve));
}

async function serveStdio(sandbox: Sandbox, session: McpSessionOptions, stop: Stop): Promise<void> {
  const { calls } = stop;
  // Once input ends nobody can answer an approval question: those calls are answered as not approved.
  const clientGone = new AbortController();
  const rounded = new RoundedRequests();
  const server = createMcpSession({ ...session, clientGone: clientGone.signal, rounded });
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  // One message at a time, an oversized one dropped and answered (the SDK's transport would close).
  const input = process.stdin.pipe(new MessageLines(({ id, bytes, reason }) => {
    log(reason === 'not-utf8' ? `dropped a message of ${bytes} bytes from the client: not valid UTF-8` : `dropped a message of ${bytes} bytes from the client: larger than ${MAX_MESSAGE_BYTES}`);
    // A response of the client's (to an elicitation of ours) gets no answer: its id is ours, not a request of theirs.
    if (id === undefined) return;
    writeMessage({ jsonrpc: '2.0', id, error: reason === 'not-utf8' ? { code: -32700, message: 'Parse error: the message is not valid UTF-8 (an argument would reach its tool changed); it was dropped' } : { code: -32600, message: `the message is larger than ${MAX_MESSAGE_BYTES} bytes; it was dropped` } });
  }));
  // The client closing our standard input is its goodbye (the SDK's transport does not watch
  // for it); the calls it sent before are still answered, then the server ends.
  const ended = new Promise<void>((resolve) => input.once('end', () => resolve())).then(async () => {
    clientGone.abort();
    await calls.drained();
    // The last answer is written a moment after its call resolves.
    await new Promise((resolve) => setImmediate(resolve));
  });
  const transport = new StdioServerTransport(input, protocolOutput, { maxBufferSize: MAX_MESSAGE_BYTES + 1 });
  // The line the transport is reading, its rounded integers noted. Added just before the transport's own listener (connect
  // adds it with no await before), this one runs first for each line, and the transport reports
  // a line it cannot read in that same turn. MessageLines hands on one line per 'data' event.
  let reading: Buffer | undefined;
  input.on('data', (line: Buffer) => {
    reading = line;
    rounded.note(line.toString('utf8'));
  });
  // A line that is not JSON, or not JSON-RPC, is answered as JSON-RPC says (with its request's
  // id when one can be read, else null), not only logged: the client would wait on it for ever.
  transport.onerror = (error) => {
    const refusal = stdioRefusal(reading?.toString('utf8'), error);
    if (refusal === undefined) return log(`stdio: ${visible(error.message)}`);
    log(`stdio: answered a message from the client with ${refusal.error.code}: ${refusal.error.message}`);
    writeMessage({ jsonrpc: '2.0', id: refusal.id, error: refusal.error });
  };
  await server.connect(transport);
  // A request reusing the id of one in progress is answered here, never handed to the SDK.
  const ids = new RequestIdsInFlight(transport);
  const deliver = transport.onmessage;
  transport.onmessage = (message) => {
    const repeated = ids.admit(message);
    if (repeated === undefined) return deliver?.(message);
    log(`stdio: refused a request reusing id ${logName(JSON.stringify(repeated.id))}, still in progress`);
    writeMessage({ jsonrpc: '2.0', ...repeated });
  };
  log('serving over stdio');
  await Promise.race([closed, ended, stopped(stop)]);
  clientGone.abort();
  await server.close().catch(() => undefined);
  await sandbox.close();
  // Our standard input may still be open (stopped by a signal): reading it would keep the process alive.
  process.stdin.unpipe(input);
  process.stdin.destroy();
}

type Tenancy = { readonly fixed: string } | { readonly header: string };

/** A refusal the client can read: an HTTP status and a JSON-RPC error body. */
function refuse(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** The tenant a request names, or why it names none. */
function tenantOf(req: IncomingMessage, tenancy: Tenancy): { tenant: string } | { problem: string } {
  if ('fixed' in tenancy) return { tenant: tenancy.fixed };
  const value = req.headers[tenancy.header];
  if (value === undefined) return { problem: `missing ${tenancy.header} header: this server takes each session's tenant from it` };
  if (typeof value !== 'string' || !TENANT.test(value)) return { problem: `the ${tenancy.header} header must be sent once, as 1-128 letters, digits or . _ : @ -` };
  return { tenant: value };
}

async function serveHttp(sandbox: Sandbox, session: (tenant: string) => McpSessionOptions, port: number, limits: SessionLimits, tenancy: Tenancy, stop: Stop): Promise<void> {
  const idleSeconds = limits.idleMs / 1000;
  const sessions = new SessionTable<StreamableHTTPServerTransport>(limits, (id, tenant) => log(`session ${id} (${logName(tenant)}) closed after ${idleSeconds} s idle`));
  // Each session's requests' rounded integers (see RoundedRequests), noted from the body read here.
  const roundedBy = new WeakMap<StreamableHTTPServerTransport, RoundedRequests>();
  // Each session's request ids in progress: a repeated one is refused before the SDK sees it.
  const idsBy = new WeakMap<StreamableHTTPServerTransport, RequestIdsInFlight>();
  const allowedHosts: string[] = [];
  const allowedOrigins: string[] = [];
  const bodies = new BodyBudget();
  const unread = new UnreadResponses((res) => log(`closed a response its client stopped reading (session ${logName(String(res.req.headers['mcp-session-id'] ?? 'none'))}); its calls' results are dropped`));

  const openSession = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const named = tenantOf(req, tenancy);
    if ('problem' in named) return refuse(res, 400, -32600, named.problem);
    const { tenant } = named;
    // Only an initialize opens a session: anything else without a session id is the client's
    // mistake, said as such (not as a full server's 503 or 429), and takes no place.
    const noSession = 'missing Mcp-Session-Id header: POST an initialize request first to open a session';
    if (req.method !== 'POST') return refuse(res, 400, -32000, noSession);
    const read = await readJsonBody(req, res, bodies, tenant);
    if (read === undefined) return;
    const { parsed } = read;
    if (typeof parsed !== 'object' || parsed === null || (parsed as { method?: unknown }).method !== 'initialize') return refuse(res, 400, -32000, noSession);
    const admission = sessions.admit(tenant);
    if (!admission.ok) return refuse(res, admission.status, -32000, admission.message, admission.status === 503 ? { 'retry-after': String(Math.ceil(idleSeconds)) } : {});
    let opened = false;
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        opened = true;
        sessions.add(id, tenant, transport);
        log(`session ${id} opened for tenant ${logName(tenant)} (${sessions.size} open)`);
      },
      onsessionclosed: (id) => {
        sessions.remove(id);
      },
      // Only this loopback address may be named in Host: no DNS rebinding. And a request a
      // browser sends from any other page (it names that page's Origin) is refused, as MCP asks.
      enableDnsRebindingProtection: true,
      allowedHosts,
      allowedOrigins,
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.remove(transport.sessionId);
    };
    // Not an initialize, or it failed: the place goes back, nothing stays open.
    res.once('close', () => {
      if (opened) return;
      admission.release();
      void transport.close().catch(() => undefined);
    });
    const rounded = new RoundedRequests();
    roundedBy.set(transport, rounded);
    await createMcpSession({ ...session(tenant), rounded }).connect(transport);
    idsBy.set(transport, new RequestIdsInFlight(transport));
    await transport.handleRequest(req, res, parsed);
  };

  // A request's headers and body must arrive within REQUEST_TIMEOUT_MS (Node's default is
  // 300 s, its headers' 60 s, checked every 30 s: a stalled body was held 75 s), so a client
  // sending a body a byte at a time holds its part of the body budget no longer.
  const http: HttpServer = createServer({ requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: 1000 }, (req, res) => {
    unread.watch(res);
    void (async () => {
      if ((req.url ?? '').split('?')[0] !== '/mcp') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: the MCP endpoint is /mcp\n');
        return;
      }
      const header = req.headers['mcp-session-id'];
      if (header === undefined) return openSession(req, res);
      const open = typeof header === 'string' ? sessions.get(header) : undefined;
      if (open === undefined) return refuse(res, 404, -32001, `session not found: it was closed, or expired after ${idleSeconds} s idle; start a new session`);
      if (!('fixed' in tenancy) && req.headers[tenancy.header] !== open.tenant) {
        return refuse(res, 403, -32000, `the ${tenancy.header} header does not match the tenant this session was opened for`);
      }
      // A standalone SSE stream (GET) does not count as activity: it cannot pin the session.
      if (req.method !== 'GET') res.once('close', sessions.begin(header as string));
      if (req.method !== 'POST') return open.value.handleRequest(req, res);
      // The body is read here, as text, so its rounded integers are noted before the SDK parses it.
      const read = await readJsonBody(req, res, bodies, open.tenant);
      if (read === undefined) return;
      const { body, parsed } = read;
      const repeated = idsBy.get(open.value)?.admit(parsed);
      if (repeated !== undefined) {
        log(`session ${header as string}: refused a request reusing id ${logName(JSON.stringify(repeated.id))}, still in progress`);
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', ...repeated }));
        return;
      }
      roundedBy.get(open.value)?.note(body);
      // Closed as unread (the client stopped reading it): its calls are cancelled as if the
      // client had asked, so they stop producing results no one will read, and their ids are free.
      const transport = open.value;
      unread.watch(res, () => {
        for (const requestId of requestIdsIn(parsed)) transport.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'the client stopped reading the response' } });
        idsBy.get(transport)?.release(parsed);
      });
      await open.value.handleRequest(req, res, parsed);
      // Refused whole by the SDK (a bad envelope, a wrong Accept header): nothing of it runs.
      if (res.statusCode >= 400) idsBy.get(open.value)?.release(parsed);
      // MCP answers a cancelled request with nothing, and the SDK keeps that request's POST
      // stream open for the answer: the session would stay busy, never idle out, and hold its
      // place for good. Its stream ends now (the SDK drops the answer of an aborted request).
      for (const cancelled of cancelledRequestIds(parsed)) open.value.closeSSEStream(cancelled);
    })().catch((error: unknown) => {
      log(`request failed: ${logName(error instanceof Error ? error.message : String(error))}`);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, '127.0.0.1', () => resolve());
  });
  const actual = (http.address() as AddressInfo).port;
  allowedHosts.push(`127.0.0.1:${actual}`, `localhost:${actual}`);
  allowedOrigins.push(`http://127.0.0.1:${actual}`, `http://localhost:${actual}`);
  log(`listening on http://127.0.0.1:${actual}/mcp (${'fixed' in tenancy ? `tenant ${tenancy.fixed}` : `tenant from the ${tenancy.header} header`}; at most ${limits.maxSessions} sessions, closed after ${idleSeconds} s idle)`);
  await stopped(stop);
  unread.stop();
  await sessions.closeAll();
  await new Promise<void>((resolve) => http.close(() => resolve()));
  await sandbox.close();
}

/** The SDK transport's own bound on a request body. */
const MAX_HTTP_BODY_BYTES = 4 * 1024 * 1024;
/** How long a request's headers and body may take to arrive. */
const REQUEST_TIMEOUT_MS = 30_000;

/** A POST's body as text and as JSON; undefined once the request was refused (too large, not JSON, over the tenant's share). */
async function readJsonBody(req: IncomingMessage, res: ServerResponse, budget: BodyBudget, tenant: string): Promise<{ body: string; parsed: unknown } | undefined> {
  const body = await readBody(req, MAX_HTTP_BODY_BYTES, budget.forRequest(tenant, res));
  if (body === BUSY) {
    refuse(res, 503, -32000, `too many request bodies in progress (at most ${budget.tenantBytes / 1024 / 1024} MiB for a tenant, ${budget.maxBytes / 1024 / 1024} MiB in all): retry in a moment`, { 'retry-after': '1', connection: 'close' });
    return undefined;
  }
  if (body === undefined) {
    if (req.destroyed && !req.complete) return undefined; // the client left mid-body: no one to answer
    refuse(res, 413, -32000, `Payload Too Large: Request body must not exceed ${MAX_HTTP_BODY_BYTES} bytes`, { connection: 'close' });
    return undefined;
  }
  if (body === NOT_UTF8) {
    refuse(res, 400, -32700, 'Parse error: the body is not valid UTF-8 (an argument would reach its tool changed)');
    return undefined;
  }
  try {
    return { body, parsed: JSON.parse(body) as unknown };
  } catch {
    refuse(res, 400, -32700, 'Parse error: Invalid JSON');
    return undefined;
  }
}

/** What readBody answers for a body that is not UTF-8: decoding would put U+FFFD in an argument without a word, as `run` refuses to. */
const NOT_UTF8: unique symbol = Symbol('not UTF-8');

/** What readBody answers when the body would pass its tenant's share of the body budget, or the budget. */
const BUSY: unique symbol = Symbol('busy');

/** A request's body as UTF-8 text; undefined once it passes `maxBytes` (reading then stops: the rest is never held). `take` charges the budget. */
function readBody(req: IncomingMessage, maxBytes: number, take: (bytes: number) => boolean): Promise<string | typeof NOT_UTF8 | typeof BUSY | undefined> {
  if (Number(req.headers['content-length']) > maxBytes) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (outcome: string | typeof NOT_UTF8 | typeof BUSY | undefined): void => {
      req.off('data', onData);
      resolve(outcome);
    };
    const onData = (chunk: Buffer): void => {
      if (size + chunk.length > maxBytes) return void (req.pause(), done(undefined));
      if (!take(chunk.length)) return void (req.pause(), done(BUSY));
      size += chunk.length;
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => {
      const body = Buffer.concat(chunks);
      done(isUtf8(body) ? body.toString('utf8') : NOT_UTF8);
    });
    req.once('close', () => done(undefined));
    req.once('error', reject);
  });
}

/**
 * Resolves on the first SIGINT or SIGTERM. The listeners stay for the rest of the process: at a
 * terminal one Ctrl-C arrives twice (from the process group and forwarded by bin.ts's
 * wrapper), and with Node's default back the second killed the server mid-answer.
 */
function stopSignal(): Promise<'SIGINT' | 'SIGTERM'> {
  return new Promise((resolve) => {
    let firstAt: number | undefined;
    const onSignal = (signal: 'SIGINT' | 'SIGTERM'): void => {
      if (firstAt === undefined) {
        firstAt = performance.now();
        resolve(signal);
      } else if (performance.now() - firstAt > 1000) log(`${signal} again: already closing once the calls in progress are answered (SIGKILL ends the server at once)`);
    };
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, onSignal);
  });
}
