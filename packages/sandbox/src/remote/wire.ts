// The messages between a host (the process that owns a call) and the executors, over NATS,
// and the subjects they travel on. Everything is JSON; every message read is checked.
//
//   host                               NATS                            executor
//   offer  -> <prefix>.offer.<plugin>  (queue group: one executor)  -> reserves a slot, answers accept|busy
//   go     -> <prefix>.exec.<executor>                               -> runs the reserved call
//   result <- <prefix>.host.<host>.<token>                          <- the outcome (or "expired": never ran)
//   capability request <- <prefix>.host.<host>.<token> (request)    <- a plugin asks; the host answers
//   ping   -> <prefix>.exec.<executor> (request)                     -> liveness while calls run there
//   cancel -> <prefix>.exec.<executor>                               -> aborts the call
//   free   <- <prefix>.free                                          <- a busy executor freed a slot: hosts
//             whose calls wait re-offer at once, to <prefix>.direct.<executor>.<plugin>
//
// A call runs only after its "go", which the host sends to exactly one executor that
// accepted it: a late or lost accept can never make a second executor run it.
import { createHash, randomBytes } from 'node:crypto';
import type { PluginSpec, SandboxOutcome } from '../worker/worker-protocol.js';

export const DEFAULT_SUBJECT_PREFIX = 'airlock';
/** Every executor of a fleet joins this queue group, so NATS hands each offer to one of them. */
export const EXECUTOR_QUEUE = 'airlock-executors';
export const SUBJECT_PREFIX_PATTERN = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/**
 * A plugin's identity on the bus: its name, limits, grants and module source, hashed. A host
 * offers a call only to executors that loaded the very same plugin (manifest and module).
 */
export function pluginFingerprint(spec: PluginSpec): string {
  const { source, ...rest } = spec;
  const sourceHash = createHash('sha256').update(source).digest('hex');
  return createHash('sha256').update(JSON.stringify({ ...rest, source: sourceHash })).digest('hex').slice(0, 32);
}

export const subjects = {
  offer: (prefix: string, fingerprint: string): string => `${prefix}.offer.${fingerprint}`,
  /** One executor's own offer subject: a host offers there first when that executor just freed a slot. */
  direct: (prefix: string, executor: string, fingerprint: string): string => `${prefix}.direct.${executor}.${fingerprint}`,
  /** An executor that refused offers (busy) says here when a slot frees, so waiting calls need not poll. */
  free: (prefix: string): string => `${prefix}.free`,
  executor: (prefix: string, executor: string): string => `${prefix}.exec.${executor}`,
  /**
   * Everything one host process receives lies under `<prefix>.host.<group>.<host>`: the group
   * is the operator's name for it (or its replicas), which NATS permissions can confine a
   * host's credentials to; the host part is random per process.
   */
  hostCalls: (prefix: string, group: string, host: string): string => `${prefix}.host.${group}.${host}.*`,
  call: (prefix: string, group: string, host: string, token: string): string => `${prefix}.host.${group}.${host}.${token}`,
  /** Answers to the host's own requests (offers, probes): in its own subtree, not the shared _INBOX. */
  hostInbox: (prefix: string, group: string, host: string): string => `${prefix}.host.${group}.${host}.inbox`,
  /**
   * Answers to an executor's capability requests: below its control subject, where hosts may
   * only answer (NATS allow_responses), so one host cannot forge another host's answers.
   */
  executorInbox: (prefix: string, executor: string): string => `${prefix}.exec.${executor}.inbox`,
};

/** A host group: one NATS subject token. */
export const HOST_GROUP_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const DEFAULT_HOST_GROUP = 'default';

/** The task as it travels: the plugin is named by fingerprint; the executor uses its own copy. */
export type RemoteTask =
  | { readonly kind: 'describe' }
  | { readonly kind: 'call'; readonly tenant: string; readonly tool: string; readonly callId: string; readonly argsJson: string }
  | { readonly kind: 'classify'; readonly tenant: string; readonly calls: readonly { readonly tool: string; readonly argsJson: string }[] };

export interface Offer {
  readonly type: 'offer';
  /** Unguessable per call (128 bits): names the call's subject on the host and binds every message of the call. */
  readonly token: string;
  /**
   * Fresh per offer (the same call may be offered several times): the host accepts "expired",
   * results and capability requests only from the attempt it sent "go" to, so a late answer
   * to an earlier offer can never re-dispatch or answer a call that runs elsewhere.
   */
  readonly attempt: string;
  /** Host clock (ms since the epoch) after which the offer is stale: an executor refuses it (see OFFER_CLOCK_SKEW_MS). */
  readonly deadline: number;
  /** Where results and capability requests of this call go. */
  readonly replyTo: string;
  readonly task: RemoteTask;
}

/** A host's liveness probe unanswered this long means the executor is gone (hung or partitioned). */
export const PROBE_TIMEOUT_MS = 3000;

/** How far an executor's clock may run ahead of a host's before fresh offers look stale to it. */
export const OFFER_CLOCK_SKEW_MS = 1000;

export type OfferAnswer = { readonly accepted: true; readonly executor: string } | { readonly accepted: false; readonly reason: 'busy' | 'tenant-busy' | 'draining' | 'invalid' | 'stale' };

export type ToExecutor =
  | { readonly type: 'go'; readonly token: string; readonly attempt: string }
  | { readonly type: 'cancel'; readonly token: string; readonly attempt: string }
  | { readonly type: 'ping' };

/** Every message of a running call names its token, the offer attempt that got "go", and the executor. */
interface FromAttempt {
  readonly token: string;
  readonly attempt: string;
  readonly executor: string;
}

export type ToHost =
  | (FromAttempt & { readonly type: 'result'; readonly outcome: SandboxOutcome })
  /** The reservation lapsed before a "go" came: the call never ran, so the host may offer it again. */
  | (FromAttempt & { readonly type: 'expired' })
  | (FromAttempt & { readonly type: 'capability'; readonly name: string; readonly json: string });

export type CapabilityAnswer = { readonly ok: true; readonly json: string } | { readonly ok: false; readonly reason: string };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encode(message: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(message));
}

/** Parses a message; anything that is not a JSON object is undefined. */
export function decode(data: Uint8Array): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(decoder.decode(data));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const TOKEN = /^[0-9a-f]{32}$/;
export const isToken = (value: unknown): value is string => typeof value === 'string' && TOKEN.test(value);
/** 128 random bits, as isToken reads them: call tokens, attempts and host ids. */
export const randomToken = (): string => randomBytes(16).toString('hex');

const FAILURE_CODES: ReadonlySet<string> = new Set(['TOOL_ERROR', 'TIMEOUT', 'CPU_LIMIT', 'MEMORY_LIMIT', 'OUTPUT_TOO_LARGE', 'INVALID_TOOL_OUTPUT', 'SANDBOX_CRASH', 'ABORTED', 'ABORTED_BEFORE_DISPATCH']);

/** An outcome as an executor sent it, checked field by field (logs and usage kept only when well-formed). */
export function readOutcome(value: unknown): SandboxOutcome | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const raw = value as Record<string, unknown>;
  const usage = readUsage(raw.usage);
  const logs = readLogs(raw.logs);
  const extra = logs === undefined ? {} : { logs };
  if (raw.ok === true && typeof raw.json === 'string') return { ok: true, json: raw.json, usage, ...extra };
  if (raw.ok === false && typeof raw.code === 'string' && FAILURE_CODES.has(raw.code) && typeof raw.message === 'string') {
    return { ok: false, code: raw.code as Extract<SandboxOutcome, { ok: false }>['code'], message: raw.message, usage, ...extra };
  }
  return undefined;
}

function readUsage(value: unknown): SandboxOutcome['usage'] {
  const raw = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const number = (field: unknown): number => (typeof field === 'number' && Number.isFinite(field) ? field : 0);
  return { cpuMs: number(raw.cpuMs), wallMs: number(raw.wallMs), bytesIn: number(raw.bytesIn), bytesOut: number(raw.bytesOut) };
}

const LEVELS: ReadonlySet<string> = new Set(['debug', 'info', 'warn', 'error']);

function readLogs(value: unknown): SandboxOutcome['logs'] {
  if (typeof value !== 'object' || value === null) return undefined;
  const raw = value as Record<string, unknown>;
  if (!Array.isArray(raw.lines)) return undefined;
  const lines = raw.lines.filter((line): line is { level: 'debug' | 'info' | 'warn' | 'error'; message: string } =>
    typeof line === 'object' && line !== null && LEVELS.has((line as { level?: unknown }).level as string) && typeof (line as { message?: unknown }).message === 'string');
  return { lines: lines.map((line) => ({ level: line.level, message: line.message })), dropped: typeof raw.dropped === 'number' ? raw.dropped : 0 };
}

/** A task as an executor received it, checked; undefined when malformed. */
export function readTask(value: unknown): RemoteTask | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const raw = value as Record<string, unknown>;
  if (raw.kind === 'describe') return { kind: 'describe' };
  if (typeof raw.tenant !== 'string') return undefined;
  if (raw.kind === 'call' && typeof raw.tool === 'string' && typeof raw.callId === 'string' && typeof raw.argsJson === 'string') {
    return { kind: 'call', tenant: raw.tenant, tool: raw.tool, callId: raw.callId, argsJson: raw.argsJson };
  }
  if (raw.kind === 'classify' && Array.isArray(raw.calls) && raw.calls.every((call) => typeof call === 'object' && call !== null && typeof (call as Record<string, unknown>).tool === 'string' && typeof (call as Record<string, unknown>).argsJson === 'string')) {
    return { kind: 'classify', tenant: raw.tenant, calls: (raw.calls as { tool: string; argsJson: string }[]).map((call) => ({ tool: call.tool, argsJson: call.argsJson })) };
  }
  return undefined;
}
