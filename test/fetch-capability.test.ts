// The fetch capability against real HTTP servers on 127.0.0.1, driven by a plugin that asks
// for whatever the test says: SSRF, redirects, DNS that changes, oversized answers, request
// caps, and secrets the plugin never sees.
import { createEngine, type JsonValue, type ToolResult } from '@airlock/core';
import { createSandbox, type Resolver, type Sandbox, type SandboxOptions } from '@airlock/sandbox';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pluginFolder } from './support/plugin-harness.js';

const seen: { server: 'a' | 'b'; url: string; authorization: string | undefined }[] = [];
const cached = new Map<string, string>();
let a: Server;
let b: Server;
let A: string;
let B: string;
let portA: number;

function serve(name: 'a' | 'b'): Promise<Server> {
  const server = createServer((req: IncomingMessage, res) => {
    seen.push({ server: name, url: req.url ?? '', authorization: req.headers.authorization });
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/echo') {
      // Honours a range, as static hosts, CDNs and caches do: a slice of the echo.
      const echo = Buffer.from(JSON.stringify({ headers: req.headers }));
      const asked = req.headers.range ?? req.headers['request-range']; // the old alias, as Apache 2.2 reads it
      const range = /^bytes=(\d+)-(\d+)$/.exec(typeof asked === 'string' ? asked : '');
      if (range === null) return void res.end(echo);
      const [from, to] = [Number(range[1]), Math.min(Number(range[2]), echo.length - 1)];
      return void res.writeHead(206, { 'content-range': `bytes ${from}-${to}/${echo.length}` }).end(echo.subarray(from, to + 1));
    }
    // Echoes as other servers spell it: JSON with "/" escaped (PHP), percent-encoded, and the token in base64.
    if (url.pathname === '/respell') {
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      return void res.setHeader('x-token', encodeURIComponent(token)).end(JSON.stringify(token).replace(/\//g, '\\/') + Buffer.from(token).toString('base64'));
    }
    // Echoes the token as a sly server might: in a header name, base64 of the whole header value
    // and of the token at every alignment inside longer text, percent-encoded in lower case.
    if (url.pathname === '/sly') {
      const header = req.headers.authorization ?? '';
      const token = header.replace(/^Bearer /, '');
      if (/^\w+$/.test(token)) res.setHeader(`x-echo-${token}`, 'name');
      const b64 = (text: string) => Buffer.from(text).toString('base64');
      return void res.end([b64(header), b64(`a${token}z`), b64(`ab${token}yz`), b64(`abc${token}`), b64(`{"auth":"${header}"}`), encodeURIComponent(token).replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase())].join('\n'));
    }
    // Echoes the token as real servers escape it, one line each: Go's JSON (& < > as \u0026...),
    // .NET's (+ ' ` too, upper-case hex), HTML, every character as \uXXXX, as HTML entities,
    // percent-encoded; and in a header, HTML-escaped.
    if (url.pathname === '/escaped') {
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      const hex = (character: string, width: number) => character.charCodeAt(0).toString(16).padStart(width, '0');
      const json = JSON.stringify(token);
      const go = json.replace(/[&<>]/g, (c) => `\\u${hex(c, 4)}`);
      const dotnet = json.replace(/[&<>+'`]/g, (c) => `\\u${hex(c, 4).toUpperCase()}`);
      const html = token.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
      const unicode = [...token].map((c) => `\\u${hex(c, 4)}`).join('');
      const entities = [...token].map((c, i) => (i % 2 === 0 ? `&#x${hex(c, 2).toUpperCase()};` : `&#${c.charCodeAt(0)};`)).join('');
      const percent = [...token].map((c) => `%${hex(c, 2).toUpperCase()}`).join('');
      res.setHeader('x-html', html);
      return void res.end([go, dotnet, html, `"${unicode}"`, entities, percent].join('\n'));
    }
    // Echoes no list of spellings covers, as servers produce them (an outside attacker's
    // finds): JSON inside a JSON string, base64 wrapped every 60 characters (Ruby), UTF-16,
    // quoted-printable, percent-encoding twice; and a redirect carrying the token onwards.
    if (url.pathname === '/wrapped') {
      const header = req.headers.authorization ?? '';
      const token = header.replace(/^Bearer /, '');
      const dotnet = (text: string) => JSON.stringify(text).replace(/[+&<>]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}`);
      const forms: Record<string, () => void> = {
        nested: () => res.end(JSON.stringify({ log: dotnet(header) })),
        ruby: () => res.end((Buffer.from(JSON.stringify({ headers: req.headers })).toString('base64').match(/.{1,60}/g) ?? []).join('\n')),
        utf16: () => res.setHeader('content-type', 'text/plain; charset=utf-16le').end(Buffer.from(`token: ${token}`, 'utf16le')),
        qp: () => res.end(header.replace(/[=+]/g, (c) => `=${c.charCodeAt(0).toString(16).toUpperCase()}`)),
        twice: () => res.setHeader('x-next', encodeURIComponent(encodeURIComponent(token))).end('ok'),
        onwards: () => res.writeHead(302, { location: `${url.searchParams.get('to') ?? '/'}?t=${encodeURIComponent(token)}` }).end(),
      };
      return void forms[url.searchParams.get('form') ?? '']?.();
    }
    // A shared cache keyed on the URL alone, in front of a header echo (Varnish's default lets
    // requests without Authorization or Cookie through to it): the first answer is served to all.
    if (url.pathname === '/cached') {
      const stored = cached.get(url.search) ?? JSON.stringify({ headers: req.headers });
      cached.set(url.search, stored);
      return void res.end(stored);
    }
    if (url.pathname === '/big') return void res.end('x'.repeat(100_000));
    if (url.pathname === '/redirect') return void res.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end();
    if (url.pathname === '/loop') return void res.writeHead(302, { location: `/loop?n=${Number(url.searchParams.get('n') ?? 0) + 1}` }).end();
    res.setHeader('x-server', name);
    res.end(`hello from ${name}`);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

beforeAll(async () => {
  a = await serve('a');
  b = await serve('b');
  portA = (a.address() as AddressInfo).port;
  A = `http://127.0.0.1:${portA}`;
  B = `http://127.0.0.1:${(b.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => a.close(resolve));
  await new Promise((resolve) => b.close(resolve));
});
const opened: Sandbox[] = [];
afterEach(async () => {
  seen.length = 0;
  await Promise.all(opened.splice(0).map((sandbox) => sandbox.close()));
});

async function open(manifest: Record<string, unknown>, options: SandboxOptions) {
  const dir = await pluginFolder('plugins/relay.js', { capabilities: ['fetch'], limits: { timeoutMs: 3000 }, ...manifest });
  const sandbox = createSandbox({ mode: 'in-process', threads: 2, ...options });
  opened.push(sandbox);
  await sandbox.loadPlugins([dir]);
  const engine = createEngine({ tools: sandbox.tools(), policy: { default: 'allow' } });
  const run = async (tool: string, args: JsonValue, tenant = 'acme'): Promise<ToolResult> => (await engine.run([{ id: 'c1', name: tool, arguments: JSON.stringify(args) }], { tenant }))[0]!;
  const fetch = async (argument: JsonValue, tenant = 'acme') => (await run('cap', { name: 'fetch', argument }, tenant) as unknown as { value: { ok: boolean; value?: { status: number; body: string; headers: Record<string, string> }; error?: string } }).value;
  return { run, fetch };
}

/** A resolver the test controls: host name to addresses, counting lookups. */
function resolver(table: Record<string, string[] | (() => string[])>): Resolver & { lookups: string[] } {
  const lookups: string[] = [];
  const resolve = async (hostname: string) => {
    lookups.push(hostname);
    const entry = table[hostname];
    const addresses = typeof entry === 'function' ? entry() : (entry ?? []);
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { lookups });
}

describe('fetch capability', () => {
  it('reaches an origin both allowlists name, and counts the request in the call\'s metadata', async () => {
    const { run } = await open({ network: { allow: [A] } }, { network: { allow: [A] } });
    const result = await run('cap', { name: 'fetch', argument: { url: `${A}/hello` } });
    expect(result).toMatchObject({ isError: false, value: { ok: true, value: { status: 200, body: 'hello from a', headers: { 'x-server': 'a' } } } });
    expect(result.metadata).toMatchObject({ capabilityRequests: 1 });
  });

  it('refuses an origin either allowlist leaves out, before connecting', async () => {
    const { fetch } = await open({ network: { allow: [A, B] } }, { network: { allow: [A] } });
    expect(await fetch({ url: `${B}/hello` })).toEqual({ ok: false, error: 'capability fetch failed' });
    expect(await fetch({ url: `https://127.0.0.1:${portA}/` })).toMatchObject({ ok: false });
    expect(await fetch({ url: 'file:///etc/passwd' })).toMatchObject({ ok: false });
    expect(seen).toEqual([]);
  });

  it('refuses loopback and metadata addresses reached through a wildcard, whatever DNS says', async () => {
    const resolve = resolver({ 'api.test': ['127.0.0.1'], 'meta.test': ['169.254.169.254'], 'mixed.test': ['198.51.100.7', '::ffff:127.0.0.1'], 'v6.test': ['::1'], 'hexmapped.test': ['::ffff:7f00:1'], 'compat.test': ['::7f00:1'],
      // IPv6 translation prefixes: SIIT, NAT64 (well-known, local-use), 6to4 carrying 127.0.0.1 and the metadata address, Teredo.
      'siit.test': ['::ffff:0:7f00:1'], 'nat64.test': ['64:ff9b::a9fe:a9fe'], 'nat64local.test': ['64:ff9b:1::a00:1'], 'sixtofour.test': ['2002:7f00:1::1'], 'sixtofourmeta.test': ['2002:a9fe:a9fe::'], 'teredo.test': ['2001:0:4136:e378:8000:63bf:3fff:fdd2'] });
    const allow = [`http://*.test:${portA}`, 'http://*.test'];
    const { fetch } = await open({ network: { allow } }, { network: { allow, resolve } });
    for (const host of ['api.test', 'meta.test', 'mixed.test', 'v6.test', 'hexmapped.test', 'compat.test', 'siit.test', 'nat64.test', 'nat64local.test', 'sixtofour.test', 'sixtofourmeta.test', 'teredo.test']) {
      expect(await fetch({ url: `http://${host}:${portA}/hello` }), host).toMatchObject({ ok: false });
    }
    expect(await fetch({ url: 'http://169.254.169.254/latest/meta-data/' })).toMatchObject({ ok: false });
    expect(seen).toEqual([]);
  });

  it('an exact DNS name in both allowlists still may not resolve to internal addresses, unless the host opts in for it', async () => {
    const resolve = resolver({ 'vendor.test': ['127.0.0.1'], 'metadata.test': ['169.254.169.254'], 'private.test': ['10.0.0.5'], localhost: ['127.0.0.1'] });
    const allow = [`http://vendor.test:${portA}`, 'http://metadata.test', 'http://private.test', `http://localhost:${portA}`, A];
    const { fetch } = await open({ network: { allow } }, { network: { allow, resolve } });
    for (const url of [`http://vendor.test:${portA}/hello`, 'http://metadata.test/latest/meta-data/', 'http://private.test/']) {
      expect(await fetch({ url }), url).toEqual({ ok: false, error: 'capability fetch failed' });
    }
    expect(seen).toEqual([]);
    // IP-literal origins and localhost name the internal address themselves: allowed.
    expect(await fetch({ url: `${A}/hello` })).toMatchObject({ ok: true, value: { body: 'hello from a' } });
    expect(await fetch({ url: `http://localhost:${portA}/hello` })).toMatchObject({ ok: true, value: { body: 'hello from a' } });
    await Promise.all(opened.splice(0).map((sandbox) => sandbox.close()));
    const optedIn = await open({ network: { allow } }, { network: { allow, resolve, allowInternal: ['VENDOR.test'] } });
    expect(await optedIn.fetch({ url: `http://vendor.test:${portA}/hello` })).toMatchObject({ ok: true, value: { body: 'hello from a' } });
    expect(await optedIn.fetch({ url: 'http://metadata.test/' })).toMatchObject({ ok: false });
    expect(() => createSandbox({ network: { allow, allowInternal: ['http://vendor.test'] } })).toThrow('options.network.allowInternal.0 must be a host name');
  });

  it('re-checks every redirect hop, and stops after five', async () => {
    const { fetch } = await open({ network: { allow: [A] } }, { network: { allow: [A, B] } });
    expect(await fetch({ url: `${A}/redirect?to=${encodeURIComponent(`${B}/hello`)}` })).toMatchObject({ ok: false });
    expect(seen.filter((hit) => hit.server === 'b')).toEqual([]);
    expect(await fetch({ url: `${A}/redirect?to=/hello` })).toMatchObject({ ok: true, value: { body: 'hello from a' } });
    expect(await fetch({ url: `${A}/loop` })).toMatchObject({ ok: false });
  });

  it('connects to the address it checked: DNS that changes afterwards is never asked again', async () => {
    let answers = 0;
    // First a public-looking (unroutable) address, then loopback: a rebinding attacker's DNS.
    const resolve = resolver({ 'rebind.test': () => ((answers += 1) === 1 ? ['198.51.100.7'] : ['127.0.0.1']) });
    const allow = [`http://*.test:${portA}`];
    const { run } = await open({ network: { allow }, limits: { timeoutMs: 1000 } }, { network: { allow, resolve } });
    const result = await run('cap', { name: 'fetch', argument: { url: `http://rebind.test:${portA}/hello` } });
    expect(JSON.stringify(result)).not.toContain('hello from a');
    expect(resolve.lookups).toEqual(['rebind.test']);
    expect(seen).toEqual([]);
  });

  it('caps response bytes and requests per call', async () => {
    const { fetch, run } = await open({ network: { allow: [A], maxResponseBytes: 1000, maxRequestsPerCall: 2 } }, { network: { allow: [A] } });
    expect(await fetch({ url: `${A}/big` })).toMatchObject({ ok: false });
    const three = await run('many', { requests: [1, 2, 3].map(() => ({ name: 'fetch', argument: { url: `${A}/hello` } })) });
    expect((three as unknown as { value: { ok: boolean }[] }).value.filter((answer) => answer.ok)).toHaveLength(2);
  });

  it('adds a secret to its origins only, never shows it to the plugin, and redacts its echo', async () => {
    const secrets = { API_TOKEN: (tenant: string) => (tenant === 'acme' ? 's3cr3t-acme' : undefined) };
    const manifest = { network: { allow: [A, B] }, secrets: { API_TOKEN: { origins: [A], header: 'Authorization', format: 'Bearer {secret}' } } };
    const { fetch, run } = await open(manifest, { network: { allow: [A, B] }, secrets });
    const echoed = await fetch({ url: `${A}/echo`, headers: { authorization: 'Bearer forged' } });
    expect(echoed).toMatchObject({ ok: true });
    expect(JSON.stringify(echoed)).not.toContain('s3cr3t-acme');
    expect(echoed.value!.body).toContain('Bearer [REDACTED]');
    expect(seen.at(-1)).toMatchObject({ server: 'a', authorization: 'Bearer s3cr3t-acme' });
    await fetch({ url: `${B}/echo` });
    expect(seen.at(-1)).toMatchObject({ server: 'b', authorization: undefined });
    // A redirect to another allowed origin does not carry the secret along.
    await fetch({ url: `${A}/redirect?to=${encodeURIComponent(`${B}/echo`)}` });
    expect(seen.at(-1)).toMatchObject({ server: 'b', authorization: undefined });
    expect(await run('names', {})).toMatchObject({ value: ['fetch'] });
  });

  it('refuses a request a secret goes with when the host supplies no value for this tenant, and never sends it bare', async () => {
    // Values an honest echo would hand back changed, past the redaction: HTTP trims a header's
    // ends, and a non-ASCII letter goes out as Latin-1 but comes back read as UTF-8.
    const unusable: Record<string, string> = { empty: '', broken: 'a\r\nx-evil: 1', padded: 's3cr3t-pad ', tabbed: '\ts3cr3t-tab', latin: 's3cr3t-\u00e9' };
    const secrets = { API_TOKEN: (tenant: string) => (tenant === 'acme' ? 's3cr3t-acme' : unusable[tenant]) };
    const manifest = { network: { allow: [A, B] }, secrets: { API_TOKEN: { origins: [A], header: 'Authorization', format: 'Bearer {secret}' } } };
    const { fetch } = await open(manifest, { network: { allow: [A, B] }, secrets });
    for (const tenant of ['globex', ...Object.keys(unusable)]) {
      expect(await fetch({ url: `${A}/echo`, headers: { authorization: 'Bearer forged' } }, tenant), tenant).toEqual({ ok: false, error: 'capability fetch failed' });
      // Nor by a redirect from an origin that needs no secret.
      expect(await fetch({ url: `${B}/redirect?to=${encodeURIComponent(`${A}/echo`)}` }, tenant), tenant).toMatchObject({ ok: false });
    }
    expect(seen.filter((hit) => hit.server === 'a')).toEqual([]);
    // Origins the secret does not go to still work.
    expect(await fetch({ url: `${B}/hello` }, 'globex')).toMatchObject({ ok: true, value: { body: 'hello from b' } });
  });

  it('awaits a lookup that answers with a promise (a vault), and one that rejects is a missing value, never a rejection that ends the host', async () => {
    const secrets = { API_TOKEN: async (tenant: string) => (tenant === 'acme' ? 's3cr3t-vault' : Promise.reject(new Error(`vault unreachable for ${tenant}`))) };
    const manifest = { network: { allow: [A] }, secrets: { API_TOKEN: { origins: [A], header: 'Authorization', format: 'Bearer {secret}' } } };
    const { fetch } = await open(manifest, { network: { allow: [A] }, secrets });
    expect(await fetch({ url: `${A}/echo` }, 'acme')).toMatchObject({ ok: true });
    expect(seen.filter((hit) => hit.server === 'a').at(-1)?.authorization).toBe('Bearer s3cr3t-vault');
    expect(await fetch({ url: `${A}/echo` }, 'globex')).toEqual({ ok: false, error: 'capability fetch failed' });
  });

  it('redacts an echoed secret however the server spells it: JSON-escaped, percent-encoded, base64', async () => {
    const token = 'tok/with+odd=chars"';
    const manifest = { network: { allow: [A] }, secrets: { API_TOKEN: { origins: [A], header: 'Authorization', format: 'Bearer {secret}' } } };
    const { fetch } = await open(manifest, { network: { allow: [A] }, secrets: { API_TOKEN: token } });
    const answer = await fetch({ url: `${A}/respell` });
    expect(answer).toMatchObject({ ok: true, value: { status: 200, headers: { 'x-token': '[REDACTED]' } } });
    expect(answer.value!.body).toBe('"[REDACTED]"[REDACTED]');
    expect(seen.at(-1)).toMatchObject({ authorization: `Bearer ${token}` });
  });

  it('redacts an echo in header names, base64 of the sent header value and at every alignment, lower-case percent-encoding, and drops content-length', async () => {
    for (const token of ['Zq9xT7mK2pLw4vRb8nYc', 'tok/with+odd=chars"x']) {
      const manifest = { network: { allow: [A] }, secrets: { API_TOKEN: { origins: [A], header: 'Authorization', format: 'Bearer {secret}' } } };
      const { fetch } = await open(manifest, { network: { allow: [A] }, secrets: { API_TOKEN: token } });
      const answer = await fetch({ url: `${A}/sly` });
      expect(answer).toMatchObject({ ok: true, value: { status: 200 } });
      expect(answer.value!.headers['content-length']).toBeUndefined();
      const seenByPlugin = JSON.stringify(answer);
      expect(seenByPlugin).not.toContain(token);
      // Nothing of the token left in any line once decoded: each line holds [REDACTED] instead.
      const lines = answer.value!.body.split('\n');
      expect(lines).toHaveLength(6);
      for (const line of lines) {
        expect(line, line).toContain('[REDACTED]');
        expect(Buffer.from(line, 'base64').toString('latin1')).not.toContain(token);
      }
      if (token.startsWith('Zq')) expect(Object.keys(answer.value!.headers)).toContain('x-echo-[REDACTED]');
      await Promise.all(opened.splice(0).map((sandbox) => sandbox.close()));
    }
  });

  it('redacts an echo however a server escapes it, character by character: Go and .NET JSON, HTML entities, \\uXXXX, percent', async () => {
    const token = "s3cr3t+K3y&<ok>/A=='q\"`y z";
    const manifest = { network: { allow: [A] }, secrets: { API_TOKEN: { origins: [A], header: 'Authorization', format: 'Bearer {secret}' } } };
    const { fetch } = await open(manifest, { network: { allow: [A] }, secrets: { API_TOKEN: token } });
    const answer = await fetch({ url: `${A}/escaped` });
    expect(answer).toMatchObject({ ok: true, value: { status: 200, headers: { 'x-html': '[REDACTED]' } } });
    expect(answer.value!.body.split('\n')).toEqual(['"[REDACTED]"', '"[REDACTED]"', '[REDACTED]', '"[REDACTED]"', '[REDACTED]', '[REDACTED]']);
  });

  it('refuses an answer still holding a secret however wrapped (nested JSON, wrapped base64, UTF-16, quoted-printable, encoded twice), and a redirect carrying it on', async () => {
    const token = 'sk_live/AbC+dEf=gH1jK2lM3nO4pQ5==';
    const manifest = { network: { allow: [A, B] }, secrets: { API_TOKEN: { origins: [A], header: 'Authorization', format: 'Bearer {secret}' } } };
    const { fetch } = await open(manifest, { network: { allow: [A, B] }, secrets: { API_TOKEN: token } });
    const forms = ['nested', 'ruby', 'utf16', 'qp', 'twice'];
    const answers: Record<string, unknown> = {};
    for (const form of forms) answers[form] = await fetch({ url: `${A}/wrapped?form=${form}` });
    expect(answers).toEqual(Object.fromEntries(forms.map((form) => [form, { ok: false, error: 'capability fetch failed' }])));
    const before = seen.length;
    expect(await fetch({ url: `${A}/wrapped?form=onwards&to=${encodeURIComponent(`${B}/echo`)}` })).toEqual({ ok: false, error: 'capability fetch failed' });
    expect(seen.slice(before).map((hit) => hit.server)).toEqual(['a']);
    // An answer with no echo goes through as ever.
    expect(await fetch({ url: `${A}/hello` })).toMatchObject({ ok: true, value: { body: 'hello from a' } });
  });

  it('refuses a range on every request of a plugin that holds a secret: slices of an echo would each pass the screen', async () => {
    const token = 'Zq9xT7mK2pLw4vRb8nYc';
    const manifest = { network: { allow: [A, B] }, secrets: { API_TOKEN: { origins: [A], header: 'x-api-key', format: '{secret}' } } };
    const { fetch } = await open(manifest, { network: { allow: [A, B] }, secrets: { API_TOKEN: token } });
    const refused = { ok: false, error: 'capability fetch failed' };
    for (const headers of [{ range: 'bytes=0-5' }, { Range: 'bytes=6-11' }, { 'if-range': 'x', range: 'bytes=0-0' }, { 'Request-Range': 'bytes=0-5' }]) {
      expect(await fetch({ url: `${A}/echo`, headers }), JSON.stringify(headers)).toEqual(refused);
      // Nor carried onto the secret's origin by a redirect from one without it.
      expect(await fetch({ url: `${B}/redirect?to=${encodeURIComponent(`${A}/echo`)}`, headers }), JSON.stringify(headers)).toEqual(refused);
    }
    expect(seen.filter((hit) => hit.server === 'a')).toEqual([]);
    // Nor to an origin the secret does not go to: a cache keyed without the scheme (https and
    // http of one host) can serve it an answer a request carrying the secret left.
    expect(await fetch({ url: `${B}/echo`, headers: { range: 'bytes=0-1' } })).toEqual(refused);
    // A plugin that holds no secret asks for ranges as it likes.
    const plain = await open({ network: { allow: [B] } }, { network: { allow: [B] } });
    expect(await plain.fetch({ url: `${B}/echo`, headers: { range: 'bytes=0-1' } })).toMatchObject({ ok: true, value: { status: 206, body: '{"' } });
    // And the whole echo to the secret's origin is redacted as ever.
    const whole = await fetch({ url: `${A}/echo` });
    expect(whole).toMatchObject({ ok: true, value: { status: 200 } });
    expect(whole.value!.body).toContain('"x-api-key":"[REDACTED]"');
  });

  it('screens an answer for the values the same secret took in other tenants\' calls: a shared cache cannot hand one tenant another\'s key', async () => {
    const keys: Record<string, string> = { acme: 'Zq9xT7mK2pLw4vRb8nYc', mallory: 'Mq4rT1bN8vLc2kPx7sWd' };
    const manifest = { network: { allow: [A] }, secrets: { API_TOKEN: { origins: [A], header: 'x-api-key', format: '{secret}' } } };
    const { fetch } = await open(manifest, { network: { allow: [A] }, secrets: { API_TOKEN: (tenant: string) => keys[tenant] } });
    const first = await fetch({ url: `${A}/cached?k=1` }, 'acme');
    expect(first.value!.body).toContain('"x-api-key":"[REDACTED]"');
    // The same URL in mallory's call: the cache answers with acme's echo.
    expect(await fetch({ url: `${A}/cached?k=1` }, 'mallory')).toEqual({ ok: false, error: 'capability fetch failed' });
    expect(await fetch({ url: `${A}/cached?k=2` }, 'mallory')).toMatchObject({ ok: true });
  });

  it('warns, at check and at load, of a secret the manifest names that the host does not supply', async () => {
    const manifest = { network: { allow: [A] }, secrets: { API_TOKEN: { origins: [A], header: 'Authorization', format: 'Bearer {secret}' }, OTHER: { origins: [A], header: 'X-Key', format: '{secret}' } } };
    const dir = await pluginFolder('plugins/relay.js', { capabilities: ['fetch'], ...manifest });
    const sandbox = createSandbox({ mode: 'in-process', threads: 1, network: { allow: [A] }, secrets: { OTHER: 'x' } });
    opened.push(sandbox);
    const [report] = await sandbox.checkPlugins([dir]);
    expect(report!.problems).toEqual([]);
    expect(report!.warnings).toEqual([expect.stringMatching(/airlock\.plugin\.json: secrets\.API_TOKEN: this host supplies no value for it, so fetch refuses requests to its origins$/)]);
    const [info] = await sandbox.loadPlugins([dir]);
    expect(info!.warnings).toEqual(report!.warnings);
  });

  it('refuses a manifest whose secret goes to an origin network.allow does not cover (the secret could never be sent)', async () => {
    const httpsA = `https://127.0.0.1:${portA}`;
    const secret = (origins: string[]) => ({ origins, header: 'Authorization', format: 'Bearer {secret}' });
    const bad = await pluginFolder('plugins/relay.js', { capabilities: ['fetch'], network: { allow: [A, `http://*.test:${portA}`] }, secrets: { T: secret([A, httpsA]), U: secret([`http://*.other:${portA}`]) } });
    const good = await pluginFolder('plugins/relay.js', { capabilities: ['fetch'], network: { allow: [A, `http://*.test:${portA}`] }, secrets: { T: secret([A, `http://api.test:${portA}`, `http://*.deep.test:${portA}`]) } });
    const sandbox = createSandbox({ mode: 'in-process', threads: 1, network: { allow: [A] }, secrets: { T: 'x', U: 'y' } });
    opened.push(sandbox);
    const [badReport, goodReport] = await sandbox.checkPlugins([bad, good]);
    expect(badReport!.problems).toEqual([
      expect.stringContaining(`secrets.T.origins.1 (${httpsA}) is not in network.allow, so the secret could never be sent there`),
      expect.stringContaining('secrets.U.origins.0'),
    ]);
    expect(goodReport!.problems).toEqual([]);
  });

  it('binds secrets on the host side: a plugin cannot name another plugin\'s secret and send it to its own origin', async () => {
    const secret = (origins: string[]) => ({ origins, header: 'Authorization', format: 'Bearer {secret}' });
    const owner = await pluginFolder('plugins/relay.js', { name: 'owner', capabilities: ['fetch'], network: { allow: [A] }, secrets: { TOKEN: secret([A]) } });
    const thief = await pluginFolder('plugins/relay.js', { name: 'thief', capabilities: ['fetch'], network: { allow: [B] }, secrets: { TOKEN: secret([B]) } });
    // Its own tool names, so only the secret stands between the two.
    await writeFile(join(thief, 'index.js'), (await readFile(join(thief, 'index.js'), 'utf8')).replace(/name: '(\w+)'/g, "name: 'thief_$1'"));
    const sandboxWith = (TOKEN: NonNullable<SandboxOptions['secrets']>[string]) => {
      const sandbox = createSandbox({ mode: 'in-process', threads: 1, network: { allow: [A, B] }, secrets: { TOKEN } });
      opened.push(sandbox);
      return sandbox;
    };
    // Unbound: one plugin may name it; a second does not load, together or later.
    const unbound = sandboxWith('tok-1234');
    await expect(unbound.loadPlugins([owner, thief])).rejects.toThrow(/secrets\.TOKEN: plugin .* names this secret too, and the host does not bind it; bind it/);
    await unbound.loadPlugins([owner]);
    await expect(unbound.loadPlugins([thief])).rejects.toThrow(/bind it/);
    // Bound to origins: a manifest sending it elsewhere does not load, naming the path.
    const byOrigin = sandboxWith({ value: 'tok-1234', origins: [A] });
    const [ownerReport, thiefReport] = await byOrigin.checkPlugins([owner, thief]);
    expect(ownerReport!.problems).toEqual([]);
    expect(thiefReport!.problems).toEqual([expect.stringMatching(new RegExp(`airlock\\.plugin\\.json: secrets\\.TOKEN\\.origins\\.0 \\(${B.replace(/\./g, '\\.')}\\) is outside the origins the host binds this secret to \\(${A.replace(/\./g, '\\.')}\\)$`))]);
    await expect(byOrigin.loadPlugins([thief])).rejects.toThrow('is outside the origins the host binds this secret to');
    // Bound to plugins: only those may name it.
    const byPlugin = sandboxWith({ value: 'tok-1234', plugins: ['owner'] });
    await expect(byPlugin.loadPlugins([thief])).rejects.toThrow('secrets.TOKEN: the host binds this secret to "owner", not to plugin "thief"');
    expect(seen).toEqual([]);
    // The owner still gets its secret where the binding allows.
    await byPlugin.loadPlugins([owner]);
    const engine = createEngine({ tools: byPlugin.tools(), policy: { default: 'allow' } });
    await engine.run([{ id: 'c1', name: 'cap', arguments: JSON.stringify({ name: 'fetch', argument: { url: `${A}/echo` } }) }], { tenant: 'acme' });
    expect(seen).toEqual([expect.objectContaining({ server: 'a', authorization: 'Bearer tok-1234' })]);
  });

  it('checks the host\'s secret bindings when the sandbox is created', () => {
    expect(() => createSandbox({ network: { allow: [A] }, secrets: { T: { value: 'x', origins: ['https://example.com/path'] } } })).toThrow('options.secrets.T.origins.0 must be an origin');
    expect(() => createSandbox({ network: { allow: [A] }, secrets: { T: { value: 'x', plugins: [] } } })).toThrow('options.secrets.T.plugins must be a non-empty list of plugin names');
    expect(() => createSandbox({ network: { allow: [A] }, secrets: { T: { value: '' } } })).toThrow('options.secrets.T.value must be');
    expect(() => createSandbox({ network: { allow: [A] }, secrets: { T: { value: 'x', origin: [A] } as never } })).toThrow('options.secrets.T.origin is not a setting of a secret');
  });

  it('checks the host\'s secret values when the sandbox is created', async () => {
    expect(() => createSandbox({ network: { allow: [A] }, secrets: { T: '' } })).toThrow('options.secrets.T must be a non-empty string of printable ASCII with no space at either end, or a function of the tenant');
    for (const value of ['a\nb', 'tok ', ' tok', 'tok\t', 'tok\u00e9', 'tok\u00a0', 't\u0000k', 'tok\u007f']) {
      expect(() => createSandbox({ network: { allow: [A] }, secrets: { T: value } }), JSON.stringify(value)).toThrow('options.secrets.T must be');
    }
    // Inside a value, spaces and tabs are as HTTP sends them.
    await createSandbox({ network: { allow: [A] }, secrets: { T: 'Zq9 x\tT7/+=!~' } }).close();
    expect(() => createSandbox({ network: { allow: [A] }, secrets: { T: 42 as unknown as string } })).toThrow('options.secrets.T must be');
  });

  it('checks the manifest\'s network and secrets keys by path', async () => {
    const dir = await pluginFolder('plugins/relay.js', { capabilities: ['fetch'], network: { allow: ['https://example.com/path', 'ftp://x'] }, secrets: { T: { origins: [A], header: 'Authorization', format: 'Bearer' }, U: { origins: [A], header: 'Host', format: '{secret}' }, V: { origins: [A], header: 'Request-Range', format: '{secret}' } } });
    const sandbox = createSandbox({ mode: 'in-process', network: { allow: [A] } });
    opened.push(sandbox);
    const [report] = await sandbox.checkPlugins([dir]);
    const problems = report!.problems.join('\n');
    expect(problems).toContain('network.allow.0 must be an origin');
    expect(problems).toContain('network.allow.1 must be an origin');
    expect(problems).toContain('secrets.T.format must contain "{secret}"');
    expect(problems).toContain('secrets.U.header must not be a header the host sets itself');
    expect(problems).toContain('secrets.V.header must not be a header that asks for part of an answer');
  });
});
