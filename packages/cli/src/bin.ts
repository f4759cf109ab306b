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
  const { main } = await import('./main.js');
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
    // would otherwise swallow it and the wrapper would exit 0.
    for (const name of forwarded) process.off(name, forward);
    process.exitCode = 128 + (constants.signals[signal] ?? 0);
    process.kill(process.pid, signal);
  });
}
