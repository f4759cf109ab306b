// The operator's manifest, `airlock.plugin.json`. Every key is checked; unknown keys
// are errors, and limits may be omitted but never exceed the host's caps.
import { posix } from 'node:path';
import { didYouMean, findControlCharacter, TOOL_NAME_PATTERN } from '@airlock/core';
import { z } from 'zod';
import { HOST_HEADERS, MAX_RESPONSE_BYTES_CAP, PART_HEADERS } from '../capabilities/fetch.js';
import { parseOrigin } from '../capabilities/network-origins.js';
import { HOST_LIMIT_CAPS, MIN_MEMORY_MB, type PluginLimits } from './host-limits.js';

const decision = z.enum(['allow', 'deny', 'ask'], { error: 'must be "allow", "deny" or "ask"' });
const toolName = z.string().regex(TOOL_NAME_PATTERN, 'must be 1-64 letters, digits, "_" or "-", starting with a letter or "_"');

// Globs and roots are matched against model-written paths: a control character in one is a mistake.
const invisible = (text: string): boolean => findControlCharacter(text) !== undefined;
const glob = z.string().min(1, 'must be a non-empty glob').refine((text) => !invisible(text), 'must not contain control characters');
const globs = z.union([glob, z.array(glob).min(1, 'must list at least one glob')], { error: 'must be a glob or a list of globs' });
const root = z.string().refine(
  (text) => text.startsWith('/') && posix.normalize(text) === text.replace(/(.)\/+$/, '$1') && !invisible(text) && !/[*?[\]{}()!+@\\]/.test(text),
  'must be an absolute, normalized path (no "." or ".." segments, no glob characters)',
);
/** `"/etc/**"`, a list, or `{ "matches": ..., "root": "/srv/workspace" }` to resolve relative paths against a root. */
const condition = z.union([globs, z.strictObject({ matches: globs, root: root.optional() })], { error: 'must be a glob, a list of globs, or { "matches": globs, "root": "/absolute/folder" }' });

/**
 * A record whose keys name things (tools, argument paths, secrets). zod leaves a "__proto__"
 * key out of a record's output without checking it (assigning it would set the prototype),
 * so a rule or secret under that name would vanish and a deny would protect nothing:
 * refused instead, naming the way that works.
 */
function namedRecord<Key extends z.ZodType<string, string>, Value extends z.ZodType>(key: Key, value: Value, instead: string) {
  return z.preprocess((input, context) => {
    if (typeof input === 'object' && input !== null && Object.hasOwn(input, '__proto__')) {
      context.addIssue({ code: 'custom', input, path: ['__proto__'], message: `cannot be a key here (JSON readers take it for the object's prototype)${instead}` });
    }
    return input;
  }, z.record(key, value));
}

/** An origin for the fetch capability's allowlist: scheme, host and optional port, or a "*." subdomain wildcard. */
const origin = z.string().refine((text) => parseOrigin(text) !== undefined, 'must be an origin like "https://api.example.com", "http://127.0.0.1:8080" or "https://*.example.com"');

function limit(caps: PluginLimits, key: keyof PluginLimits, min: number) {
  return z
    .number({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a number') })
    .min(min, `must be at least ${min}`)
    .max(caps[key], `must be at most ${caps[key]} (the host's cap)`)
    // Not .int(): it calls 1e308 "no whole number" (past safe integers) where the cap is what it passes.
    .refine(Number.isInteger, 'must be a whole number')
    .optional();
}

export function manifestSchema(caps: PluginLimits = HOST_LIMIT_CAPS) {
  return z.strictObject({
    name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'must be 1-64 lowercase letters, digits, ".", "_" or "-"'),
    module: z.string().min(1, 'must name the plugin module file').regex(/^(?!\/)(?!.*(^|\/)\.\.(\/|$)).+\.(m?js)$/, 'must be a relative path to a .js or .mjs file inside the plugin folder'),
    version: z.string().max(64, 'must be at most 64 characters').optional(),
    description: z.string().max(1000, 'must be at most 1000 characters').optional(),
    limits: z.strictObject({
      memoryMb: limit(caps, 'memoryMb', MIN_MEMORY_MB),
      timeoutMs: limit(caps, 'timeoutMs', 1),
      cpuMs: limit(caps, 'cpuMs', 1),
      maxOutputBytes: limit(caps, 'maxOutputBytes', 1),
    }).optional(),
    permissions: z.strictObject({
      default: decision.optional(),
      tools: namedRecord(toolName, decision, '; for a tool named "__proto__" write a rule: { "tool": "__proto__", "decision": ... }').optional(),
      /** Argument-level rules for this plugin's tools, e.g. deny write_file when path matches /etc/**. */
      rules: z.array(z.strictObject({
        tool: globs,
        when: namedRecord(z.string().min(1, 'argument paths must not be empty'), condition, '').optional(),
        decision,
        reason: z.string().max(500, 'must be at most 500 characters').optional(),
      })).max(100, 'must hold at most 100 rules').optional(),
    }).optional(),
    capabilities: z.array(z.string().regex(/^[a-z][a-zA-Z0-9_.]{0,63}$/, 'must be a capability name')).max(32, 'must list at most 32 capabilities').refine((names) => new Set(names).size === names.length, 'must not list a capability twice').optional(),
    /** Quotas of the tenant's workspace folder while this plugin writes; the host's caps apply above them. */
    workspace: z.strictObject({
      maxBytes: z.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be at least 1').max(2 ** 40, `must be at most ${2 ** 40}`).optional(),
      maxFiles: z.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be at least 1').max(10_000_000, 'must be at most 10000000').optional(),
    }).optional(),
    /** The caps on this plugin's kv entries per tenant, in bytes (keys, values and a per-entry overhead) and keys; the host's caps apply above them. */
    kv: z.strictObject({
      maxBytes: z.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be at least 1').max(2 ** 40, `must be at most ${2 ** 40}`).optional(),
      maxKeys: z.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be at least 1').max(10_000_000, 'must be at most 10000000').optional(),
    }).optional(),
    /** Origins the fetch capability may reach (the host's allowlist narrows them), and per-call caps. */
    network: z.strictObject({
      allow: z.array(origin).max(100, 'must list at most 100 origins').optional(),
      maxRequestsPerCall: z.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be at least 1').max(1000, 'must be at most 1000').optional(),
      maxResponseBytes: z.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be at least 1').max(MAX_RESPONSE_BYTES_CAP, `must be at most ${MAX_RESPONSE_BYTES_CAP}`).optional(),
    }).optional(),
    /** Secrets the host adds to fetch requests to their origins: the plugin names them, never reads them. */
    secrets: namedRecord(
      z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'must be a secret name (letters, digits, "_")'),
      z.strictObject({
        origins: z.array(origin).min(1, 'must list at least one origin').max(20, 'must list at most 20 origins'),
        header: z.string().regex(/^[!#$%&'*+.^`|~\w-]{1,64}$/, 'must be an HTTP header name').refine((name) => !HOST_HEADERS.has(name.toLowerCase()), 'must not be a header the host sets itself (host, content-length, connection, ...)').refine((name) => !PART_HEADERS.has(name.toLowerCase()), 'must not be a header that asks for part of an answer (range, if-range, request-range)'),
        format: z.string().max(200, 'must be at most 200 characters').refine((text) => text.includes('{secret}') && !/[\r\n\0]/.test(text), 'must contain "{secret}" and no line breaks, e.g. "Bearer {secret}"'),
      }),
      '',
    ).optional(),
    /** "fresh" (default): a new realm per call. "warm": one realm per tenant, reused while healthy. */
    realm: z.enum(['fresh', 'warm'], { error: 'must be "fresh" or "warm"' }).optional(),
    /** Realm features absent unless granted: the isolate's heap limit does not see their memory. */
    grants: z.strictObject({ webAssembly: z.boolean().optional(), sharedArrayBuffer: z.boolean().optional() }).optional(),
  });
}

export type PluginManifest = z.infer<ReturnType<typeof manifestSchema>>;

let shapeSchema: z.ZodType | undefined;

/** The keys the manifest allows at a path (`[]`, `['limits']`, `['permissions', 'rules', 0]`). */
export function knownKeysAt(path: readonly PropertyKey[]): string[] {
  let node: z.ZodType = (shapeSchema ??= manifestSchema());
  const unwrap = (): void => {
    for (;;) {
      if (node instanceof z.ZodOptional) node = node.unwrap() as z.ZodType;
      else if (node instanceof z.ZodPipe) node = node.out as z.ZodType; // namedRecord's check in front of its record
      else return;
    }
  };
  unwrap();
  for (const step of path) {
    if (node instanceof z.ZodObject) node = (node.shape as Record<string, z.ZodType>)[String(step)] ?? z.never();
    else if (node instanceof z.ZodArray) node = node.element as z.ZodType;
    else if (node instanceof z.ZodRecord) node = node.valueType as z.ZodType;
    else return [];
    unwrap();
  }
  return node instanceof z.ZodObject ? Object.keys(node.shape) : [];
}

/** `limits.memoryMb must be at most 512 (the host's cap)` from a zod issue. */
export function describeIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String).join('.') || '(manifest)';
  if (issue.code === 'unrecognized_keys') {
    const known = knownKeysAt(issue.path);
    const prefix = path === '(manifest)' ? '' : `${path}.`;
    // One problem per key, each with its own suggestion: "limit: unknown key (did you mean "limits"?)".
    return issue.keys.map((key) => `${prefix}${key}: unknown key${didYouMean(key, known)}`).join('; ');
  }
  // A record key that fails its own check (a tool name in permissions.tools): zod says only "Invalid key in record".
  if (issue.code === 'invalid_key') return `${path}: this key ${issue.issues[0]?.message ?? 'is not valid here'}`;
  if (issue.code === 'invalid_type' && issue.input === undefined) return `${path} is required`;
  // zod's own wording for a type it did not get a custom message for ("Invalid input: expected
  // array, received string"), said as every other problem is.
  if (issue.code === 'invalid_type' && issue.message.startsWith('Invalid input')) return `${path} must be ${withArticle(issue.expected)} (it is ${withArticle(jsonTypeOf(issue.input))})`;
  return `${path} ${issue.message}`;
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value;
}

function withArticle(type: string): string {
  if (type === 'null') return 'null';
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}
