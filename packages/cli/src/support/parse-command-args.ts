// node:util parseArgs errors, turned into one-line usage errors naming the command.
import { UsageError } from './usage-error.js';

export function withUsage<T>(command: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    const message = (error as Error).message.replace(/\. To specify a positional argument.*$/s, '');
    throw new UsageError(`${message} (see "airlock ${command} --help")`);
  }
}
