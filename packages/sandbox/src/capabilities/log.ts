// The log capability: a plugin's own structured log lines, kept with its console output in
// the one per-call log the operator sees (`results[i].logs`, stderr in cards mode), under
// the same bounds. Console lines arrive with the call's outcome, log lines while it runs;
// mergeCallLogs puts them together when the call ends.
import { MAX_LOG_BYTES, MAX_LOG_LINES, type LogLine } from '../isolate/live-call.js';
import type { Capability, CapabilityContext } from '../plugin/capability-handler.js';
import { argumentObject, CapabilityRefusal, stringField } from './capability-argument.js';

const LEVELS: ReadonlySet<string> = new Set(['debug', 'info', 'warn', 'error']);

/** The lines one call logged through the capability; bounded like the console. */
export class CallLog {
  readonly lines: LogLine[] = [];
  dropped = 0;
  #bytes = 0;

  add(line: LogLine): void {
    if (this.lines.length >= MAX_LOG_LINES || this.#bytes + line.message.length > MAX_LOG_BYTES) {
      this.dropped += 1;
      return;
    }
    this.#bytes += line.message.length;
    this.lines.push(line);
  }
}

/** Each call's log, found by the context its capability requests carry; gone with the call. */
const callLogs = new WeakMap<CapabilityContext, CallLog>();

export function attachCallLog(context: CapabilityContext): CallLog {
  const log = new CallLog();
  callLogs.set(context, log);
  return log;
}

export const logCapability: Capability = (argument, context) => {
  const object = argumentObject(argument, 'log');
  const level = stringField(object, 'level', 'log');
  if (!LEVELS.has(level)) throw new CapabilityRefusal('log: level must be "debug", "info", "warn" or "error"');
  const text = stringField(object, 'message', 'log');
  const data = Object.hasOwn(object, 'data') ? object.data : undefined;
  const message = data === undefined ? text : `${text} ${JSON.stringify(data)}`;
  const log = callLogs.get(context);
  if (log === undefined) throw new CapabilityRefusal('log: no call to log into');
  log.add({ level: level as LogLine['level'], message });
  return null;
};

/** Console lines, then log lines, within one call's bounds; what does not fit is counted as dropped. */
export function mergeCallLogs(console: { readonly lines: readonly LogLine[]; readonly dropped: number } | undefined, log: CallLog | undefined): { lines: LogLine[]; dropped: number } | undefined {
  if (log === undefined || (log.lines.length === 0 && log.dropped === 0)) return console === undefined ? undefined : { lines: [...console.lines], dropped: console.dropped };
  const merged = new CallLog();
  for (const line of [...(console?.lines ?? []), ...log.lines]) merged.add(line);
  return { lines: merged.lines, dropped: merged.dropped + (console?.dropped ?? 0) + log.dropped };
}

