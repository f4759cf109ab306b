// Who answers `ask`: names given with --approve, everything with --approve-all,
// or a person at the terminal. Anything else is no answer, and the pipeline ends the
// call as APPROVAL_UNAVAILABLE (never PERMISSION_DENIED: nobody said no, so the model
// is told to get approval another way, not to give up on the action).
import { didYouMean, type ApprovalRequest, type Approver } from '@airlock/core';
import { approvalPrompt, fullArguments } from './approval-prompt.js';
import { TerminalLines } from './terminal-lines.js';

export function approverFor(options: { approveAll: boolean; approve: readonly string[]; interactive: boolean }): Approver | undefined {
  if (options.approveAll) return () => true;
  const named = new Set(options.approve);
  const ask = options.interactive ? askAtTerminal() : undefined;
  if (named.size === 0) return ask;
  return (request, signal) => {
    if (named.has(request.toolName)) return true;
    if (ask === undefined) throw new Error('not approved on the command line (--approve names other tools), and no terminal to ask');
    return ask(request, signal);
  };
}

/** What is wrong with `--approve` names that name no loaded tool (a typo would approve nothing without a word), or undefined. */
export function unknownApprovals(approve: readonly string[], tools: readonly string[]): string | undefined {
  const known = new Set(tools);
  const unknown = approve.find((name) => !known.has(name));
  return unknown === undefined ? undefined : `--approve ${JSON.stringify(unknown)}: no loaded tool has that name${didYouMean(unknown, known)}`;
}

/**
 * One question at a time on stderr, so stdout stays the program's output. The person sees
 * every argument escaped and wrapped; when something is too long to show, the prompt says
 * how much is hidden and "v" shows all of it before the question is asked again.
 */
function askAtTerminal(): Approver {
  const lines = new TerminalLines(process.stdin);
  // From now on a line answers only the question on the screen: nothing typed ahead is kept.
  lines.listen();
  let queue: Promise<unknown> = Promise.resolve();
  return (request, signal) => {
    const answer = queue.then(() => ask(lines, request, signal));
    queue = answer.catch(() => undefined);
    return answer;
  };
}

async function ask(lines: TerminalLines, request: ApprovalRequest, signal: AbortSignal): Promise<boolean> {
  // A pty without a size reports 0 columns.
  const width = Math.max(40, process.stderr.columns || 80);
  let prompt = approvalPrompt(request, width);
  for (;;) {
    // Cancelled while an earlier question was on the screen (Ctrl-C): never ask this one.
    signal.throwIfAborted();
    process.stderr.write(prompt.text);
    let line: string | undefined;
    try {
      line = await lines.next(signal);
    } catch (error) {
      process.stderr.write('\n'); // Ctrl-C: what follows starts on a line of its own, not after the question
      throw error;
    }
    if (line === undefined) {
      process.stderr.write('\n'); // end of input (Ctrl-D) echoes no line break either
      return false; // no answer is no
    }
    const reply = line.trim();
    if (/^y(es)?$/i.test(reply)) return true;
    if (!prompt.hidden || !/^v(iew)?$/i.test(reply)) return false;
    process.stderr.write(fullArguments(request, width));
    prompt = { text: `Allow ${prompt.tool}? [y/N] `, hidden: false, tool: prompt.tool };
  }
}
