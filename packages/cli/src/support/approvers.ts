// Who answers `ask`: names given with --approve, everything with --approve-all,
// or a person at the terminal. Anything else leaves the approver unset, and the
// pipeline ends the call as APPROVAL_UNAVAILABLE.
import type { Approver } from '@airlock/core';
import { createInterface } from 'node:readline/promises';

export function approverFor(options: { approveAll: boolean; approve: readonly string[]; interactive: boolean }): Approver | undefined {
  if (options.approveAll) return () => true;
  const named = new Set(options.approve);
  const ask = options.interactive ? askAtTerminal() : undefined;
  if (named.size === 0) return ask;
  return (request, signal) => (named.has(request.toolName) ? true : ask === undefined ? 'not approved on the command line' : ask(request, signal));
}

/** One question at a time on stderr, so stdout stays the program's output. */
function askAtTerminal(): Approver {
  let queue: Promise<unknown> = Promise.resolve();
  return (request, signal) => {
    const answer = queue.then(async () => {
      const prompt = createInterface({ input: process.stdin, output: process.stderr });
      try {
        const args = JSON.stringify(request.args);
        const shown = args.length > 200 ? `${args.slice(0, 200)}…` : args;
        const line = await prompt.question(`Approval needed (${request.reason}).\nAllow ${request.toolName}(${shown})? [y/N] `, { signal });
        return /^y(es)?$/i.test(line.trim());
      } finally {
        prompt.close();
      }
    });
    queue = answer.catch(() => undefined);
    return answer;
  };
}
