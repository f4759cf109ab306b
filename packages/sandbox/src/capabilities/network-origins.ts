// Origins a plugin may reach: "https://api.example.com", "http://127.0.0.1:8080", or
// "https://*.example.com" (any subdomain, not the bare domain). Scheme, host and port all
// count; a URL's port defaults by its scheme.
import { isIP } from 'node:net';

export interface OriginPattern {
  readonly protocol: 'http:' | 'https:';
  /** Lowercase host; for a wildcard, the suffix after "*.". IPv6 without brackets. */
  readonly host: string;
  readonly wildcard: boolean;
  readonly port: string;
  readonly text: string;
}

const DEFAULT_PORT: Record<string, string> = { 'http:': '80', 'https:': '443' };

/** Parses an allowlist entry; undefined when it is not an origin (no path, query, user or bare "*"). */
export function parseOrigin(text: string): OriginPattern | undefined {
  // An origin and nothing else: no path, query, fragment or user info.
  if (!/^https?:\/\/[^/?#@\\]+\/?$/i.test(text)) return undefined;
  const wildcard = /^https?:\/\/\*\./i.test(text);
  if (text.replace(/^https?:\/\/\*\./i, '').includes('*')) return undefined;
  let url: URL;
  try {
    url = new URL(wildcard ? text.replace('*.', 'wildcard-placeholder.') : text);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || (url.pathname !== '/' && url.pathname !== '')) return undefined;
  const host = unbracket(url.hostname).toLowerCase();
  const suffix = wildcard ? host.slice('wildcard-placeholder.'.length) : host;
  if (wildcard && (suffix.length === 0 || isIP(suffix) !== 0)) return undefined;
  return { protocol: url.protocol, host: suffix, wildcard, port: url.port === '' ? (DEFAULT_PORT[url.protocol] as string) : url.port, text };
}

export function unbracket(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/** The pattern a URL matches, preferring one that names its host exactly. */
export function matchOrigin(patterns: readonly OriginPattern[], url: URL): OriginPattern | undefined {
  const host = unbracket(url.hostname).toLowerCase();
  const port = url.port === '' ? DEFAULT_PORT[url.protocol] : url.port;
  let found: OriginPattern | undefined;
  for (const pattern of patterns) {
    if (pattern.protocol !== url.protocol || pattern.port !== port) continue;
    if (!pattern.wildcard && pattern.host === host) return pattern;
    if (pattern.wildcard && host.endsWith(`.${pattern.host}`)) found ??= pattern;
  }
  return found;
}
