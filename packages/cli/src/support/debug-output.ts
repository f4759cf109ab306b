// --debug (or AIRLOCK_DEBUG=1): failures the engine contained instead of throwing (a
// failing preSchedule hook, a scheduler fault, a throwing observer) printed on stderr, so
// an operator sees what the results alone do not say. Escaped like every line we print.
import type { PipelineObservers } from '@airlock/core';
import { visible } from './terminal-text.js';

export const DEBUG_HELP = '  --debug             print failures the engine contained (preSchedule, scheduler, observers)\n                      on stderr, with stacks (also: AIRLOCK_DEBUG=1)';

export function debugEnabled(flag: boolean | undefined): boolean {
  return flag === true || process.env.AIRLOCK_DEBUG === '1';
}

export function debugOnError(enabled: boolean, stream: NodeJS.WritableStream = process.stderr): PipelineObservers['onError'] {
  if (!enabled) return undefined;
  return (error, context) => {
    const where = [context.source, context.observer, context.callId === undefined ? undefined : `call ${context.callId}`, context.tenant === undefined ? undefined : `tenant ${context.tenant}`].filter((part) => part !== undefined).join(', ');
    const cause = error.cause instanceof Error ? error.cause.stack ?? error.cause.message : String(error.cause);
    const lines = [`airlock: debug: ${error.code} (${where}): ${error.message}`, ...cause.split('\n').map((line) => `  ${line}`)];
    stream.write(`${lines.map(visible).join('\n')}\n`);
  };
}
