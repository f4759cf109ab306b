// airlock executor: serve sandboxed calls from hosts over NATS (`airlock run|serve --executors`).
// Runs until SIGTERM or SIGINT, then drains: takes no new calls, finishes those in flight, exits 0.
import { SandboxError, shownEngineUrl, startExecutor, type Executor } from '@airlock/sandbox';
import { parseArgs } from 'node:util';
import { loadCapabilities } from '../support/load-capabilities.js';
import { withUsage } from '../support/parse-command-args.js';
import { plural } from '../support/plural.js';
import { UsageError } from '../support/usage-error.js';

export const EXECUTOR_HELP = `Usage: airlock executor --connect <url> --plugins <dir>... [options]

Serves sandboxed tool calls to hosts that run "airlock run" or "airlock serve" with
--executors <url> (or createRemoteSandbox in code), over a NATS server. Plugin code runs
here, in the same isolates, limits, tenant rules and crash quarantine as a local sandbox;
secrets, the workspace and kv stay on the host that made the call, and a plugin's capability
requests travel back to it. Only plugins loaded here run: every executor of a fleet should
hold the same plugin folders as its hosts (a call goes only to executors with the identical
manifest and module).

Options:
  --connect <url>     the NATS server, e.g. nats://127.0.0.1:4222 (comma-separate a cluster)
  --plugins <dir>     a plugin folder or a folder of plugin folders (repeatable)
  --slots <n>         calls one tenant may run here at once (default: CPU count, at least 2)
  --reserve <n>       slots on top of --slots that no single tenant can fill, so one tenant's
                      flood never occupies every executor (default 1)
  --processes <n>     sandbox processes here; tenants are spread over them (default 2)
  --subject-prefix <p> the NATS subject prefix shared with the hosts (default "airlock")
  --capabilities <m>  the hosts' --capabilities module: only its names are read here (the
                      functions run on the host), so a manifest granting a group of them
                      ("db" for db.query and db.exec) expands as the host expands it
  -h, --help          show this help

SIGTERM or Ctrl-C drains: no new calls are taken, calls in flight finish, then it exits 0.
Exit codes: 0 drained, 2 bad usage, bad plugins, or the NATS server unreachable.

Start a NATS server first (Debian: apt-get install nats-server), e.g.:
  nats-server -a 127.0.0.1 -p 4222

Examples:
  airlock executor --connect nats://127.0.0.1:4222 --plugins ./plugins
  airlock run transcript.json --plugins ./plugins --executors nats://127.0.0.1:4222`;

function count(flag: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,4}$/.test(value) || Number(value) < min) throw new UsageError(`${flag} must be a whole number, at least ${min} (got "${value}")`);
  return Number(value);
}

export async function executorCommand(argv: string[]): Promise<number> {
  const { values, positionals } = withUsage('executor', () => parseArgs({ args: argv, allowPositionals: true, strict: true, options: {
    connect: { type: 'string' },
    plugins: { type: 'string', multiple: true },
    slots: { type: 'string' },
    reserve: { type: 'string' },
    processes: { type: 'string' },
    'subject-prefix': { type: 'string' },
    capabilities: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  } }));
  if (values.help === true) {
    process.stdout.write(`${EXECUTOR_HELP}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`executor takes no positional arguments, got "${positionals[0]}" (plugins go after --plugins; see "airlock executor --help")`);
  if (values.connect === undefined) throw new UsageError('--connect <url> is required: the NATS server, e.g. nats://127.0.0.1:4222');
  const plugins = values.plugins ?? [];
  if (plugins.length === 0) throw new UsageError('--plugins <dir> is required (a plugin folder or a folder of plugin folders)');
  const slots = count('--slots', values.slots, 1);
  const reserveSlots = count('--reserve', values.reserve, 0);
  const processes = count('--processes', values.processes, 1);
  const capabilityNames = Object.keys((await loadCapabilities(values.capabilities)) ?? {});

  // Signals during startup are honoured once the executor exists: it then drains at once.
  let stopRequested = false;
  let executor: Executor | undefined;
  const stop = (): void => {
    stopRequested = true;
    if (executor === undefined) return;
    process.stderr.write(`airlock executor: draining (${plural(executor.inFlight(), 'call')} in flight)\n`);
    void executor.drain();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  try {
    executor = await startExecutor({
      url: values.connect,
      plugins,
      ...(slots === undefined ? {} : { slots }),
      ...(reserveSlots === undefined ? {} : { reserveSlots }),
      ...(processes === undefined ? {} : { processes }),
      ...(values['subject-prefix'] === undefined ? {} : { subjectPrefix: values['subject-prefix'] }),
      ...(capabilityNames.length === 0 ? {} : { capabilityNames }),
    });
  } catch (error) {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    if (SandboxError.isInstance(error)) {
      const message = error.message.replace(/^options\.url/, '--connect').replace(/^options\.capabilityNames\.\d+ /, `--capabilities ${values.capabilities ?? ''}: `).replace(/^options\.(\w+)/, (_, name: string) => `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
      const more = error.problems.length > 1 ? ` (and ${plural(error.problems.length - 1, 'more problem')}; run "airlock check" for all)` : '';
      throw new UsageError(`${message}${more}`);
    }
    throw error;
  }
  const tools = executor.plugins.reduce((sum, plugin) => sum + plugin.tools.length, 0);
  // One line a supervisor (or a test) can wait for: the executor takes calls from here on.
  process.stderr.write(`airlock executor ${executor.id}: serving ${plural(executor.plugins.length, 'plugin')} (${plural(tools, 'tool')}) on ${shownEngineUrl(values.connect)}\n`);
  if (stopRequested) stop();
  await executor.stopped;
  process.off('SIGTERM', stop);
  process.off('SIGINT', stop);
  process.stderr.write(`airlock executor ${executor.id}: stopped\n`);
  // Everything is stopped; a NATS client timer left from retrying a dead server must not keep
  // the process up (a drain while the server is down). Unref'd: it fires only in that case.
  setTimeout(() => process.exit(), 1000).unref();
  return 0;
}
