#!/usr/bin/env -S node --no-node-snapshot
// The airlock binary. isolated-vm needs --no-node-snapshot on Node 20+; users never pass
// node flags, so a process started without it re-runs itself with it.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';

/** Set by the wrapper below for the process it starts, whose IPC channel then tells of the wrapper's death. */
const WRAPPED = 'AIRLOCK_WRAPPED';

if (process.execArgv.includes('--no-node-snapshot')) {
  // A reader that stopped reading (`| head`): end as a Unix tool does on SIGPIPE, quietly.
  // Any other failure to write (a full disk) is one line and exit 2, never a stack trace.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(128 + constants.signals.SIGPIPE);
      if (stream === process.stdout) {
        try {
          process.stderr.write(`airlock: could not write the output (${error.code ?? 'write failed'})\n`);
        } catch {
          // stderr is gone too: the exit code says it
        }
      }
      process.exit(2);
    });
  }
  // Started by the wrapper: a SIGKILL of the wrapper cannot be forwarded, so its death is
  // heard as the IPC channel closing, and this process ends as on SIGTERM (the command's own
  // handling: calls cancelled and answered) instead of running on unwatched under init.
  if (process.env[WRAPPED] === '1' && process.channel !== undefined) {
    delete process.env[WRAPPED]; // not for processes this one starts
    process.channel.unref();
    process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  }
  // Loading the commands takes a moment: a Ctrl-C or SIGTERM meanwhile ends the process with
  // a word rather than silently. Each listener stays until a command takes its signal over
  // with its own and goes only once that one is added: with no listener for a moment, a
  // signal read then was lost, and the run went on to the end and exited 0. A command with
  // none of its own keeps these.
  let started = false;
  const ending = (signal: 'SIGINT' | 'SIGTERM') => (): never => {
    const what = signal === 'SIGINT' ? 'interrupted' : 'terminated';
    process.stderr.write(started ? `airlock: ${what}\n` : `airlock: ${what} while starting up: nothing ran\n`);
    process.exit(128 + constants.signals[signal]);
  };
  const listeners = new Map<string | symbol, () => never>([['SIGINT', ending('SIGINT')], ['SIGTERM', ending('SIGTERM')]]);
  const handOver = (event: string | symbol): void => {
    const ours = listeners.get(event);
    if (ours === undefined) return;
    listeners.delete(event);
    if (listeners.size === 0) process.off('newListener', handOver);
    queueMicrotask(() => process.off(event, ours)); // after the command's listener is in place
  };
  for (const [signal, listener] of listeners) process.on(signal, listener);
  process.on('newListener', handOver);
  const { main } = await import('./main.js');
  started = true;
  process.exitCode = await main(process.argv.slice(2));
} else {
  const child = spawn(process.execPath, ['--no-node-snapshot', ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, [WRAPPED]: '1' },
  });
  const forward = (signal: NodeJS.Signals): void => void child.kill(signal);
  const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const signal of forwarded) process.on(signal, forward);
  child.on('exit', (code, signal) => {
    if (signal === null) {
      process.exitCode = code ?? 1;
      return;
    }
    // Die of the same signal, so the shell sees what the user did. Our forwarding handler
    // would otherwise swallow it and the wrapper would exit 0. A command that handles the
    // signal exits with a code instead, having said why: this one was silent.
    if (signal === 'SIGINT') process.stderr.write('airlock: interrupted\n');
    for (const name of forwarded) process.off(name, forward);
    process.exitCode = 128 + (constants.signals[signal] ?? 0);
    process.kill(process.pid, signal);
  });
}
