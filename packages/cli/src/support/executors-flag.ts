// --executors <url> on run and serve: sandboxed calls go to `airlock executor` processes over
// NATS; --subject-prefix and --host-group place this host on that bus.
import { UsageError } from './usage-error.js';

export const EXECUTORS_FLAG = { executors: { type: 'string' }, 'subject-prefix': { type: 'string' }, 'host-group': { type: 'string' } } as const;

export const EXECUTORS_HELP = `  --executors <url>   run plugin code on "airlock executor" processes reached over this NATS
                      server (e.g. nats://127.0.0.1:4222) instead of local sandbox processes;
                      secrets, workspace and kv stay here; not with --code-mode
  --subject-prefix <p>
                      with --executors: the subject prefix shared with the executors
                      (default "airlock"); one fleet per prefix
  --host-group <name> with --executors: this host's name on the bus (default "default"); its
                      calls are answered under <prefix>.host.<name>.>, the subtree a NATS
                      user can be confined to (docs/security.md, "The bus must be private")`;

/** Where a host's sandboxed calls go: an executor fleet on a NATS server. */
export interface ExecutorsTarget {
  readonly url: string;
  readonly subjectPrefix?: string;
  readonly hostGroup?: string;
}

/** The --executors flags as one target, or undefined for local sandbox processes. */
export function executorsTarget(values: { readonly executors?: string | undefined; readonly 'subject-prefix'?: string | undefined; readonly 'host-group'?: string | undefined }): ExecutorsTarget | undefined {
  const { executors, 'subject-prefix': subjectPrefix, 'host-group': hostGroup } = values;
  if (executors === undefined) {
    const stray = subjectPrefix !== undefined ? '--subject-prefix' : hostGroup !== undefined ? '--host-group' : undefined;
    if (stray !== undefined) throw new UsageError(`${stray} places this host on an executor fleet's bus: give --executors <url> too`);
    return undefined;
  }
  return { url: executors, ...(subjectPrefix === undefined ? {} : { subjectPrefix }), ...(hostGroup === undefined ? {} : { hostGroup }) };
}

/** A remote sandbox's option error, in the flag's words. */
export function asExecutorsFlagMessage(message: string): string {
  return message.replace(/^options\.url/, '--executors').replace(/^options\.subjectPrefix/, '--subject-prefix').replace(/^options\.hostGroup/, '--host-group');
}
