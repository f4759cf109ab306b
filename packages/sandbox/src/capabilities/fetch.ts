// The fetch capability: HTTP(S) to the origins the manifest allows and the host also allows.
// Each hop (the request and every redirect, at most 5) is checked afresh: its origin
// against both allowlists, every address its host resolves to against the internal ranges
// (unless the allowlist names that exact host), and the connection is made to the address
// that was checked (undici's connector is handed it, so DNS is not asked twice). Requests
// and response bytes are capped per call; the call's end aborts the request. Secrets are
// added by the host to their origins only and redacted from whatever comes back.
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import type { JsonObject, JsonValue } from '@airlock/core';
import type { Capability, CapabilityContext } from '../plugin/capability-handler.js';
import { argumentObject, CapabilityRefusal, hasInvisible, optionalStringField, stringField } from './capability-argument.js';
import { isInternalAddress } from './address-check.js';
import { matchOrigin, parseOrigin, unbracket, type OriginPattern } from './network-origins.js';
import type { BoundSecret } from './secret-binding.js';
import { secretScrubber } from './secret-redaction.js';
import { echoesSecret } from './secret-echo-screen.js';
import { RecentSecretValues } from './recent-secret-values.js';

export const DEFAULT_MAX_REQUESTS_PER_CALL = 10;
export const DEFAULT_MAX_RESPONSE_BYTES = 512 * 1024;
/** The capability channel carries 1 MiB of JSON; escapes can double a body. */
export const MAX_RESPONSE_BYTES_CAP = 512 * 1024;
const MAX_REDIRECTS = 5;
/**
 * Values of one secret (across tenants, and rotations) that every answer is also screened for:
 * the screen's cost grows with them (a 512 KiB base64 answer: about 30 ms for one, 40 for 16).
 */
const RECENT_VALUES_PER_SECRET = 16;
const ECHO_REFUSED = 'fetch: the answer echoes a secret in a form that cannot be redacted';
const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
const METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** Headers only the host sets: framing, routing and connection management. */
export const HOST_HEADERS: ReadonlySet<string> = new Set(['host', 'accept-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'proxy-authorization', 'proxy-connection', 'expect']);
/**
 * Headers that ask for part of an answer (`request-range`: the pre-standard alias Apache 2.2
 * and some caches still honour): refused on every request of a plugin that holds a secret,
 * and never a secret's own header.
 */
export const PART_HEADERS: ReadonlySet<string> = new Set(['range', 'if-range', 'request-range']);

/** Resolves a host name to its addresses; the default asks the OS (tests pass their own). */
export type Resolver = (hostname: string) => Promise<readonly { readonly address: string; readonly family: number }[]>;

export interface FetchManifest {
  readonly network?: { readonly allow?: readonly string[] | undefined; readonly maxRequestsPerCall?: number | undefined; readonly maxResponseBytes?: number | undefined } | undefined;
  readonly secrets?: Readonly<Record<string, { readonly origins: readonly string[]; readonly header: string; readonly format: string }>> | undefined;
}

export interface FetchSettings {
  /** The host's allowlist: a request must match it and the manifest's. */
  readonly allow: readonly OriginPattern[];
  readonly maxRequestsPerCall: number;
  readonly maxResponseBytes: number;
  /** Secret values by name (a string, or per tenant), with the origins and plugins the host binds each to. */
  readonly secrets: Readonly<Record<string, BoundSecret>>;
  readonly resolve: Resolver;
  /** DNS names (lowercase) whose internal answers the host accepts, when both allowlists name them exactly. */
  readonly allowInternal: ReadonlySet<string>;
}

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

const requestCounts = new WeakMap<CapabilityContext, number>();

export function fetchCapability(settings: FetchSettings, manifestOf: (plugin: string) => FetchManifest | undefined): Capability {
  const recent = new RecentSecretValues(RECENT_VALUES_PER_SECRET);
  return async (argument, context) => {
    const manifest = manifestOf(context.plugin);
    const allow = (manifest?.network?.allow ?? []).flatMap((text) => parseOrigin(text) ?? []);
    const maxRequests = Math.min(manifest?.network?.maxRequestsPerCall ?? settings.maxRequestsPerCall, settings.maxRequestsPerCall);
    const maxBytes = Math.min(manifest?.network?.maxResponseBytes ?? settings.maxResponseBytes, settings.maxResponseBytes);
    const secrets = await secretsFor(manifest, settings, context.tenant, context.plugin);
    for (const secret of secrets) if (secret.value !== undefined) recent.remember(secret.name, secret.value);
    // This call's values (just remembered) and what the same secrets were in other tenants' calls.
    const screenedFor = [...new Set(recent.valuesOf(secrets.map((secret) => secret.name)))];
    const object = argumentObject(argument, 'fetch');
    let url = parseUrl(stringField(object, 'url', 'fetch'));
    let method = (optionalStringField(object, 'method', 'fetch') ?? 'GET').toUpperCase();
    if (!METHODS.has(method)) throw new CapabilityRefusal('fetch: unsupported method');
    const headers = plainHeaders(object.headers);
    // A range asks an honest server for a slice of its answer: slices of an echo of a secret,
    // each shorter than the secret, would pass the redaction and the screen. Refused on every
    // request of a plugin that holds a secret, not only those carrying it: a cache keyed
    // without the scheme serves the answer to https://host, which carried it, to http://host.
    if (secrets.length > 0 && Object.keys(headers).some((name) => PART_HEADERS.has(name))) throw new CapabilityRefusal('fetch: a plugin that holds a secret cannot ask for part of an answer (range)');
    let body = optionalStringField(object, 'body', 'fetch');
    for (let hop = 0; ; hop += 1) {
      const count = (requestCounts.get(context) ?? 0) + 1;
      requestCounts.set(context, count);
      if (count > maxRequests) throw new CapabilityRefusal('fetch: too many requests in this call');
      // identity: a compressed echo of a secret would pass the redaction unread.
      const response = await oneHop(url, method, { ...headers, ...secretHeaders(secrets, url), 'accept-encoding': 'identity' }, body, allow, settings, maxBytes, context.signal);
      const location = response.location;
      if (location === undefined || !REDIRECTS.has(response.status)) return redact({ status: response.status, headers: response.headers, body: response.body }, secrets, screenedFor);
      if (hop >= MAX_REDIRECTS) throw new CapabilityRefusal('fetch: too many redirects');
      // A location that echoes a secret would carry it to the next origin in its URL.
      if (echoesSecret([location], screenedFor)) throw new CapabilityRefusal(ECHO_REFUSED);
      url = parseUrl(new URL(location, url).href);
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
      }
    }
  };
}

interface HopResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly location: string | undefined;
}

async function oneHop(url: URL, method: string, headers: Record<string, string>, body: string | undefined, allow: readonly OriginPattern[], settings: FetchSettings, maxBytes: number, signal: AbortSignal): Promise<HopResponse> {
  signal.throwIfAborted();
  const granted = matchOrigin(allow, url);
  const hosted = matchOrigin(settings.allow, url);
  if (granted === undefined || hosted === undefined) throw new CapabilityRefusal('fetch: origin not allowed');
  const hostname = unbracket(url.hostname).toLowerCase();
  // Internal addresses only when both allowlists name this very host (never by wildcard), and
  // the host is an address or localhost: a DNS name's owner can answer 127.0.0.1 or the
  // metadata address at will, so a DNS name reaches internal addresses only when the host
  // opted in for it by name (network.allowInternal).
  const exact = !granted.wildcard && !hosted.wildcard && (isIP(hostname) !== 0 || hostname === 'localhost' || settings.allowInternal.has(hostname));
  const addresses = isIP(hostname) !== 0 ? [{ address: hostname, family: isIP(hostname) }] : await untilAborted(settings.resolve(hostname), signal);
  if (addresses.length === 0) throw new CapabilityRefusal('fetch: host does not resolve');
  if (!exact && addresses.some((entry) => isInternalAddress(entry.address))) throw new CapabilityRefusal('fetch: internal address refused');
  const chosen = addresses[0] as { address: string; family: number };
  // The connection goes to the checked address: the connector never asks DNS again.
  const pinned: LookupFunction = (_host, options, callback) => {
    if (options.all === true) (callback as unknown as (error: null, addresses: { address: string; family: number }[]) => void)(null, [{ address: chosen.address, family: chosen.family }]);
    else callback(null, chosen.address, chosen.family);
  };
  const agent = new Agent({ connect: { lookup: pinned }, pipelining: 0 });
  try {
    const response = await request(url, { method: method as 'GET', headers, ...(body === undefined ? {} : { body }), dispatcher: agent, signal, maxRedirections: 0 });
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of response.body) {
      total += (chunk as Buffer).length;
      if (total > maxBytes) {
        response.body.destroy();
        throw new CapabilityRefusal('fetch: response too large');
      }
      chunks.push(chunk as Buffer);
    }
    const plain: Record<string, string> = {};
    for (const [name, value] of Object.entries(response.headers)) if (value !== undefined) plain[name] = Array.isArray(value) ? value.join(', ') : value;
    const location = response.headers.location;
    return { status: response.statusCode, headers: plain, body: Buffer.concat(chunks).toString('utf8'), location: Array.isArray(location) ? location[0] : location };
  } finally {
    void agent.destroy().catch(() => undefined);
  }
}

/** A resolver that never answers holds the host's work no longer than the call lasts. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = (): void => reject(new CapabilityRefusal('fetch: cancelled'));
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

function parseUrl(text: string): URL {
  if (text.length > 8192 || hasInvisible(text)) throw new CapabilityRefusal('fetch: bad url');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CapabilityRefusal('fetch: bad url');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '') throw new CapabilityRefusal('fetch: only http and https urls without credentials');
  return url;
}

function plainHeaders(value: JsonValue | undefined): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new CapabilityRefusal('fetch: headers must be an object');
  const headers: Record<string, string> = {};
  for (const [name, text] of Object.entries(value as JsonObject)) {
    if (!/^[!#$%&'*+.^`|~\w-]{1,64}$/.test(name) || typeof text !== 'string' || /[\r\n\0]/.test(text)) throw new CapabilityRefusal('fetch: bad header');
    if (!HOST_HEADERS.has(name.toLowerCase())) headers[name.toLowerCase()] = text;
  }
  return headers;
}

interface AppliedSecret {
  readonly name: string;
  /** Undefined when the host has no usable value for this tenant: its origins are then refused. */
  readonly value: string | undefined;
  readonly origins: readonly OriginPattern[];
  /** The host's binding: the secret never goes anywhere else, whatever the manifest lists. */
  readonly hostOrigins: readonly OriginPattern[] | undefined;
  readonly header: string;
  readonly format: string;
}

/**
 * Printable ASCII, inner spaces and tabs allowed, none at either end. An honest echo of any
 * other value comes back changed, and so past the redaction: HTTP trims a header value's
 * ends, and undici sends other characters as Latin-1 but reads an answer's headers as UTF-8.
 */
const SECRET_VALUE = /^[\x21-\x7e](?:[\x20-\x7e\t]*[\x21-\x7e])?$/;

export function usableSecret(value: unknown): value is string {
  return typeof value === 'string' && SECRET_VALUE.test(value);
}

async function secretsFor(manifest: FetchManifest | undefined, settings: FetchSettings, tenant: string, plugin: string): Promise<AppliedSecret[]> {
  const applied: AppliedSecret[] = [];
  for (const [name, spec] of Object.entries(manifest?.secrets ?? {})) {
    const binding = Object.hasOwn(settings.secrets, name) ? settings.secrets[name] : undefined;
    // Loading refuses a plugin outside the binding; this holds even if a manifest changed since.
    const source = binding !== undefined && (binding.plugins === undefined || binding.plugins.has(plugin)) ? binding.value : undefined;
    let value: unknown;
    try {
      // Awaited: a lookup that answers with a promise (a vault's) is waited for, and one that
      // rejects is a missing value, never a rejection left unhandled (Node would end the host).
      value = typeof source === 'function' ? await source(tenant) : source;
    } catch {
      value = undefined; // the embedder's lookup failed: no value, and no detail for the plugin
    }
    applied.push({ name, value: usableSecret(value) ? value : undefined, origins: spec.origins.flatMap((text) => parseOrigin(text) ?? []), hostOrigins: binding?.origins, header: spec.header.toLowerCase(), format: spec.format });
  }
  return applied;
}

/**
 * The secrets' headers for this URL. A secret whose origins match but that has no value
 * refuses the request: sent without its credential (or with an empty one) it would reach
 * the service as someone else, or leak what the plugin put in that header instead.
 */
function secretHeaders(secrets: readonly AppliedSecret[], url: URL): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const secret of secrets) {
    if (matchOrigin(secret.origins, url) === undefined) continue;
    if (secret.value === undefined) throw new CapabilityRefusal('fetch: a secret this origin needs is not supplied');
    if (secret.hostOrigins !== undefined && matchOrigin(secret.hostOrigins, url) === undefined) throw new CapabilityRefusal('fetch: a secret this origin names is not bound to it by the host');
    headers[secret.header] = secret.format.split('{secret}').join(secret.value);
  }
  return headers;
}

/** Every secret value this call could send, replaced wherever the answer echoes it: in header names, values and the body. */
function redact(answer: { status: number; headers: Record<string, string>; body: string }, secrets: readonly AppliedSecret[], screenedFor: readonly string[]): JsonValue {
  const sent = secrets.flatMap((secret) => (secret.value === undefined ? [] : [{ value: secret.value, header: secret.format.split('{secret}').join(secret.value) }]));
  const scrub = secretScrubber(sent, '');
  // Header names arrive in lower case: matched without regard to case.
  const scrubName = secretScrubber(sent, 'i');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(answer.headers)) {
    // The body the plugin sees may be shorter than the one sent: a length would not match it, and
    // the difference would tell how much was redacted.
    if (name === 'content-length') continue;
    headers[scrubName(name)] = scrub(value);
  }
  const body = scrub(answer.body);
  // What the spellings missed (nested escapes, wrapped base64, UTF-16...): the answer is refused whole.
  if (echoesSecret([...Object.keys(headers), ...Object.values(headers), body], screenedFor)) throw new CapabilityRefusal(ECHO_REFUSED);
  return { status: answer.status, headers, body };
}
