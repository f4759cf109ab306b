#!/usr/bin/env -S node --no-node-snapshot
// The airlock binary. isolated-vm needs --no-node-snapshot on Node 20+; users never pass
// node flags, so a process started without it re-runs itself with it.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';

if (process.execArgv.includes('--no-node-snapshot')) {
  // A reader that stopped reading (`| head`): end as a Unix tool does on SIGPIPE, quietly,
  // instead of an unhandled 'error' event and its stack trace.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(128 + constants.signals.SIGPIPE);
      throw error;
    });
  }
  // Loading the commands takes a moment: a Ctrl-C meanwhile ends the process with a word
  // rather than silently (each command handles its own from then on).
  const startingUp = (): never => {
    process.stderr.write('airlock: interrupted while starting up: nothing ran\n');
    process.exit(128 + constants.signals.SIGINT);
  };
  process.once('SIGINT', startingUp);
  const { main } = await import('./main.js');
  // A Ctrl-C that came while the modules evaluated (synchronously) is delivered at the next
  // turn of the loop: removed before it, the listener would take the signal with it unseen.
  await new Promise((resolve) => setImmediate(resolve));
  process.off('SIGINT', startingUp);
  process.exitCode = await main(process.argv.slice(2));
} else {
  const child = spawn(process.execPath, ['--no-node-snapshot', ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
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
