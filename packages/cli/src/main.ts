// airlock: subcommand dispatch, --help and --version, and the exit-code contract:
// 0 success, 1 the work ran but a check failed, 2 bad usage or bad input (one line, no stack).
import { didYouMean } from '@airlock/core';
import { readFileSync } from 'node:fs';
import { CHECK_HELP, checkCommand } from './commands/check.js';
import { EXECUTOR_HELP, executorCommand } from './commands/executor.js';
import { RUN_HELP, runCommand } from './commands/run.js';
import { SCHEMAS_HELP, schemasCommand } from './commands/schemas.js';
import { SERVE_HELP, serveCommand } from './commands/serve.js';
import { documentedOptions, UnknownOptionError } from './support/parse-command-args.js';
import { visible } from './support/terminal-text.js';
import { UsageError } from './support/usage-error.js';

const COMMANDS: Readonly<Record<string, (argv: string[]) => Promise<number>>> = {
  run: runCommand,
  schemas: schemasCommand,
  check: checkCommand,
  serve: serveCommand,
  executor: executorCommand,
  // Loaded on demand: the benchmark pulls in isolated-vm and Piscina for its raw baselines.
  bench: async (argv) => (await import('./commands/bench.js')).benchCommand(argv),
};

/** Each command's help, the list of options a typo is matched against. */
const HELP: Readonly<Record<string, () => Promise<string>>> = {
  run: async () => RUN_HELP,
  schemas: async () => SCHEMAS_HELP,
  check: async () => CHECK_HELP,
  serve: async () => SERVE_HELP,
  executor: async () => EXECUTOR_HELP,
  bench: async () => (await import('./commands/bench.js')).BENCH_HELP,
};

export const MAIN_HELP = `airlock: executes the tool calls a language model proposes, safely.

Usage: airlock <command> [options]

Commands:
  run [transcript|-]   run a model message's tool calls against plugins (no arguments: the bundled example)
  schemas              print the model-facing tool list for a provider
  check <plugin>...    validate plugins and their manifests, reporting every problem
  bench                measure scheduler and sandbox throughput and latency
  serve                serve the plugins' tools over MCP (stdio, or Streamable HTTP with --http)
  executor             serve sandboxed calls for run/serve --executors, over a NATS server

Options:
  -h, --help           show help (also: airlock <command> --help, airlock help <command>)
  -v, --version        print the version

Exit codes: 0 success, 1 the work ran but a check failed, 2 bad usage or bad input.
Set AIRLOCK_DEBUG=1 to see stack traces; run and serve take --debug to print the failures
the engine contained (a failing preSchedule hook, the scheduler, an observer).

Examples:
  airlock run                                   # the bundled example
  airlock run transcript.json --plugins ./plugins --json
  airlock schemas --plugins ./plugins --format anthropic
  airlock check ./plugins/notes`;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === undefined) return await runCommand([]);
    if (command === '--help' || command === '-h' || command === 'help') {
      // `airlock help run` is `airlock run --help`.
      const topic = command === 'help' && rest[0] !== undefined && !['help', '--help', '-h'].includes(rest[0]) ? rest[0] : undefined;
      const help = topic !== undefined && Object.prototype.hasOwnProperty.call(HELP, topic) ? HELP[topic] : undefined;
      if (topic !== undefined && help === undefined) throw new UsageError(`no help on "${topic}"${didYouMean(topic, Object.keys(COMMANDS))} (commands: ${Object.keys(COMMANDS).join(', ')})`);
      process.stdout.write(`${help === undefined ? MAIN_HELP : await help()}\n`);
      return 0;
    }
    if (command === '--version' || command === '-v') {
      process.stdout.write(`${version()}\n`);
      return 0;
    }
    const handler = Object.prototype.hasOwnProperty.call(COMMANDS, command) ? COMMANDS[command] : undefined;
    if (handler === undefined) {
      const hint = command.startsWith('-') ? didYouMean(command, ['--help', '--version'], (name) => name) : didYouMean(command, Object.keys(COMMANDS));
      throw new UsageError(`unknown ${command.startsWith('-') ? 'option' : 'command'} "${command}"${hint} (commands: ${Object.keys(COMMANDS).join(', ')}; see "airlock --help")`);
    }
    return await handler(rest);
  } catch (caught) {
    const error = caught instanceof UnknownOptionError && HELP[caught.command] !== undefined ? caught.suggesting(documentedOptions(await HELP[caught.command]!())) : caught;
    if (process.env.AIRLOCK_DEBUG === '1') process.stderr.write(`${String((error as Error).stack ?? error).split('\n').map(visible).join('\n')}\n`);
    const message = error instanceof Error ? error.message : String(error);
    // Messages quote file names, plugin problems and input: escaped, and kept to one line.
    process.stderr.write(`airlock: ${visible(UsageError.isInstance(error) ? message : `unexpected failure: ${message}`)}\n`);
    return 2;
  }
}
