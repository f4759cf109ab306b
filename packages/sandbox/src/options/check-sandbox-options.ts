// createSandbox's options, every field checked by path: a typo in `mode` or an unknown key
// is an error naming it, never a silent default.
import { z } from 'zod';
import { SandboxError } from '../errors/sandbox-error.js';
import { HOST_LIMIT_CAPS, MIN_MEMORY_MB, type PluginLimits } from '../manifest/host-limits.js';

/** Below this the sandbox process cannot hold Node, the pool and one isolate. */
export const MIN_PROCESS_MEMORY_MB = 128;
/** A host capability's name (also checked for executors' `capabilityNames`). */
export const CAPABILITY_NAME = /^[a-z][a-zA-Z0-9_.]{0,63}$/;

const wholeNumber = (min: number, max = Number.MAX_SAFE_INTEGER, maxNote = '') =>
  z
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}${maxNote}`)
    .optional();
const fn = z.custom<(...args: never[]) => unknown>((value) => typeof value === 'function', 'must be a function');
const cap = (key: keyof PluginLimits, min: number) => wholeNumber(min, HOST_LIMIT_CAPS[key], " (the host's cap)");

const optionsSchema = z.strictObject({
  mode: z.enum(['process', 'in-process'], { error: 'must be "process" or "in-process"' }).optional(),
  threads: wholeNumber(1, 1024),
  processMemoryMb: wholeNumber(MIN_PROCESS_MEMORY_MB),
  caps: z
    .strictObject({
      memoryMb: cap('memoryMb', MIN_MEMORY_MB),
      timeoutMs: cap('timeoutMs', 1),
      cpuMs: cap('cpuMs', 1),
      maxOutputBytes: cap('maxOutputBytes', 1),
    }, { error: 'must be an object' })
    .optional(),
  // Checked by path in tenancy-options.ts (and a removed option there says what replaced it).
  processes: z.unknown().optional(),
  fairShare: z.unknown().optional(),
  quarantine: z.unknown().optional(),
  maxConcurrentPerTenant: z.unknown().optional(),
  // The standard capabilities' settings, checked by path where they are configured (capabilities/standard-capabilities.ts).
  network: z.unknown().optional(),
  secrets: z.unknown().optional(),
  workspace: z.unknown().optional(),
  kv: z.unknown().optional(),
  capabilities: z.record(z.string(), fn, { error: 'must be an object of functions' }).optional(),
}, { error: 'must be an object' });

function describe(issue: z.core.$ZodIssue): string {
  const path = ['options', ...issue.path.map(String)].join('.');
  if (issue.code === 'unrecognized_keys') return `${issue.keys.map((key) => `${path}.${key}`).join(', ')}: unknown option${issue.keys.length > 1 ? 's' : ''}`;
  return `${path} ${issue.message}`;
}

/**
 * The options read once into a copy (what the sandbox then uses) and checked; throws SandboxError
 * INVALID_OPTION listing every problem, each naming its path. A getter or proxy trap that throws
 * is INVALID_OPTION too, not the raw error.
 */
export function readSandboxOptions<T extends object>(options: T): T {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    checkSandboxOptions(options);
    return options;
  }
  let copy: T;
  try {
    // Every known option read as the object answers it (own or inherited, a getter), once; the
    // unknown ones on it or its prototypes are refused by the check below, as own ones are.
    const keys = new Set(Object.keys(optionsSchema.shape));
    for (let at: object | null = options; at !== null && at !== Object.prototype; at = Reflect.getPrototypeOf(at)) {
      for (const key of Reflect.ownKeys(at)) if (typeof key === 'string' && !(at !== options && key === 'constructor')) keys.add(key);
    }
    const read: Record<string, unknown> = {};
    for (const key of keys) {
      const value: unknown = (options as Record<string, unknown>)[key];
      if (value !== undefined) read[key] = value;
    }
    copy = read as T;
    checkSandboxOptions(copy);
  } catch (error) {
    if (SandboxError.isInstance(error)) throw error;
    const problem = `options could not be read (a getter or proxy trap threw: ${error instanceof Error ? error.message : String(error)})`;
    throw new SandboxError('INVALID_OPTION', problem, [problem]);
  }
  return copy;
}

function checkSandboxOptions(options: unknown): void {
  const problems: string[] = [];
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) problems.push(...parsed.error.issues.map(describe));
  const capabilities = (options as { capabilities?: unknown } | null)?.capabilities;
  if (typeof capabilities === 'object' && capabilities !== null) {
    for (const name of Object.keys(capabilities)) {
      if (!CAPABILITY_NAME.test(name)) problems.push(`options.capabilities: "${name}" is not a capability name (a letter, then letters, digits, "_" or ".")`);
    }
  }
  if (problems.length > 0) throw new SandboxError('INVALID_OPTION', problems[0] as string, problems);
}
