// A log capability request read as one line of the call's log: `{ level, message, data? }`.
// The worker reads it when the request arrives, beside the plugin's console lines, so the
// two keep the order the plugin emitted them in; the host's `log` reads it the same way.
import type { LogLine } from '../isolate/live-call.js';

const LEVELS: ReadonlySet<string> = new Set(['debug', 'info', 'warn', 'error']);
/** As long as one console line may be; the rest is cut, as the console cuts it. */
export const MAX_LOG_MESSAGE = 2000;

/** The line a log request's argument makes, or undefined when it is not a well-formed request. */
export function logLineOf(argument: unknown): LogLine | undefined {
  if (argument === null || typeof argument !== 'object' || Array.isArray(argument)) return undefined;
  const { level, message, data } = argument as { level?: unknown; message?: unknown; data?: unknown };
  if (typeof level !== 'string' || !LEVELS.has(level) || typeof message !== 'string') return undefined;
  const text = data === undefined || !Object.hasOwn(argument, 'data') ? message : `${message} ${JSON.stringify(data)}`;
  return { level: level as LogLine['level'], message: text.length > MAX_LOG_MESSAGE ? `${text.slice(0, MAX_LOG_MESSAGE)}… (truncated)` : text };
}

/** The line in a request's JSON text; undefined when the text is not JSON or not a log request. */
export function logLineOfJson(json: string): LogLine | undefined {
  try {
    return logLineOf(JSON.parse(json) as unknown);
  } catch {
    return undefined;
  }
}
