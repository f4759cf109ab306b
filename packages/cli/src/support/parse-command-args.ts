// node:util parseArgs errors, turned into one-line usage errors naming the command.
import { didYouMean } from '@airlock/core';
import { UsageError } from './usage-error.js';

/** An option the command does not know; main adds "did you mean" from the command's help. */
export class UnknownOptionError extends UsageError {
  constructor(readonly command: string, readonly option: string) {
    super(`Unknown option '${option}' (see "airlock ${command} --help")`);
  }

  /** The same error, naming the closest documented option when one is close. */
  suggesting(documented: Iterable<string>): UsageError {
    const hint = didYouMean(this.option, documented, (name) => name).replace(/^ \((.*)\)$/, '$1');
    return hint === '' ? this : new UsageError(`Unknown option '${this.option}'; ${hint} (see "airlock ${this.command} --help")`);
  }
}

/** The long options a help text documents: what a typo is compared against. */
export function documentedOptions(help: string): string[] {
  return [...new Set([...help.matchAll(/(?:^|\s)(--[a-z][a-z0-9-]*)/g)].map((match) => match[1]!))];
}

export function withUsage<T>(command: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    // One line: node's lines would reach the terminal escaped, as a literal "\n".
    const message = (error as Error).message.replace(/\. To specify a positional argument.*$/s, '').replace(/\s*\n\s*/g, ' ');
    const unknown = (error as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /^Unknown option '([^']+)'/.exec(message) : null;
    if (unknown !== null) throw new UnknownOptionError(command, unknown[1]!);
    throw new UsageError(`${message} (see "airlock ${command} --help")`);
  }
}
