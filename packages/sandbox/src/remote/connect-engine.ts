// Connects to the engine that carries sandboxed calls between hosts and executors (NATS),
// with one-line errors for a bad URL and a fast, clear one when the server is unreachable.
import { connect, type NatsConnection } from 'nats';
import { SandboxError } from '../errors/sandbox-error.js';
import { HOST_GROUP_PATTERN, SUBJECT_PREFIX_PATTERN } from './wire.js';

/** How long the first connection may take before the server counts as unreachable. */
export const CONNECT_TIMEOUT_MS = 2000;

/** Checks a `nats://host:port` URL (several may be given, comma-separated); returns the server list. */
export function engineServers(url: unknown, path: string): string[] {
  if (typeof url !== 'string' || url.trim() === '') throw new SandboxError('INVALID_OPTION', `${path} must be a nats:// URL, like nats://127.0.0.1:4222`);
  // A password may hold a comma: the list is split only between servers, never inside credentials.
  const servers = shownEngineUrl(url) === url ? url.split(',').map((part) => part.trim()) : splitServers(url);
  for (const server of servers) {
    let parsed: URL;
    try {
      parsed = new URL(server);
    } catch {
      throw new SandboxError('INVALID_OPTION', `${path}: "${shownEngineUrl(server)}" is not a URL (expected nats://host:port; a password with "#", "/", "?" or "@" must be percent-encoded)`);
    }
    if (parsed.protocol === 'redis:' || parsed.protocol === 'rediss:') {
      throw new SandboxError('INVALID_OPTION', `${path}: executors are reached over NATS, not Redis (see docs/architecture.md, "Remote executors"); give a nats:// URL`);
    }
    if (parsed.protocol !== 'nats:' && parsed.protocol !== 'tls:') throw new SandboxError('INVALID_OPTION', `${path}: "${shownEngineUrl(server)}" must start with nats:// (or tls://)`);
    if (parsed.hostname === '') throw new SandboxError('INVALID_OPTION', `${path}: "${shownEngineUrl(server)}" names no host`);
    // nats://tok/en@host parses as host "tok" and a path: a token or password holding "/" was meant.
    if (parsed.pathname !== '' && parsed.pathname !== '/') throw new SandboxError('INVALID_OPTION', `${path}: "${shownEngineUrl(server)}" has a path, which a NATS URL never has (a token or password with "#", "/", "?" or "@" must be percent-encoded)`);
  }
  return servers;
}

/** Servers of a list whose credentials may hold commas: a new server starts only where a scheme does. */
function splitServers(url: string): string[] {
  return url
    .split(/,(?=\s*[a-z][a-z0-9+.-]*:\/\/)/i)
    .map((part) => part.trim());
}

export function checkHostGroup(group: unknown, path: string): string {
  if (typeof group !== 'string' || !HOST_GROUP_PATTERN.test(group)) {
    throw new SandboxError('INVALID_OPTION', `${path} must be 1-64 letters, digits, "-" or "_" (one NATS subject token), like "web" or "tenant-eu"`);
  }
  return group;
}

export function checkSubjectPrefix(prefix: unknown, path: string): string {
  if (typeof prefix !== 'string' || !SUBJECT_PREFIX_PATTERN.test(prefix) || prefix.length > 64) {
    throw new SandboxError('INVALID_OPTION', `${path} must be dot-separated letters, digits, "-" or "_" (a NATS subject prefix), like "airlock" or "prod.airlock"`);
  }
  return prefix;
}

/**
 * The URL (or a piece of it) as it may be shown: whatever stands between "://" and the next
 * "@" is masked, user, password or token, however it is spelled (a "#", "/" or "," in a
 * password leaves a string no URL parser takes, and it must not show then either).
 */
export function shownEngineUrl(url: string): string {
  return url.replace(/:\/\/[^@]*@/g, '://***@');
}

/**
 * Credentials written in the URL, as the NATS client takes them (it reads none from the URL
 * itself): `nats://user:password@host` a user and password, `nats://token@host` a token. One
 * set for the whole list: the first server that carries any.
 */
function credentialsOf(servers: readonly string[]): { readonly servers: string[]; readonly auth: { user: string; pass: string } | { token: string } | Record<string, never> } {
  let auth: { user: string; pass: string } | { token: string } | Record<string, never> = {};
  const bare = servers.map((server) => {
    const parsed = new URL(server);
    if (parsed.username === '' && parsed.password === '') return server;
    const user = decodeURIComponent(parsed.username);
    const pass = decodeURIComponent(parsed.password);
    if (Object.keys(auth).length === 0) auth = parsed.password === '' ? { token: user } : { user, pass };
    parsed.username = '';
    parsed.password = '';
    return parsed.toString().replace(/\/$/, '');
  });
  return { servers: bare, auth };
}

/** `inboxPrefix`: where answers to this client's requests come, so NATS permissions can name it. */
export async function connectEngine(url: string, path: string, name: string, inboxPrefix: string): Promise<NatsConnection> {
  const { servers, auth } = credentialsOf(engineServers(url, path));
  try {
    // Reconnects forever once connected: a NATS restart must not end a long-lived executor or host.
    return await connect({ servers, name, inboxPrefix, timeout: CONNECT_TIMEOUT_MS, maxReconnectAttempts: -1, reconnectTimeWait: 250, ...auth });
  } catch (error) {
    const why = (error as { code?: string }).code ?? (error as Error).message;
    const shown = shownEngineUrl(url);
    if (/AUTHORIZATION_VIOLATION|AUTHENTICATION/i.test(why)) {
      throw new SandboxError('ENGINE_UNREACHABLE', `the NATS server at ${shown} refused the credentials (${why}): give a user and password in the URL (nats://user:password@host:4222) or a token (nats://token@host:4222)`);
    }
    throw new SandboxError('ENGINE_UNREACHABLE', `cannot reach the NATS server at ${shown} (${why}); start one with "nats-server -a 127.0.0.1 -p 4222" (see README, "Remote executors")`);
  }
}
