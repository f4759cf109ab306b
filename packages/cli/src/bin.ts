#!/usr/bin/env -S node --no-node-snapshot
// The airlock binary. isolated-vm needs --no-node-snapshot on Node 20+; users never pass
// node flags, so a process started without it re-runs itself with it.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

if (process.execArgv.includes('--no-node-snapshot')) {
  const { main } = await import('./main.js');
  process.exitCode = await main(process.argv.slice(2));
} else {
  const child = spawn(process.execPath, ['--no-node-snapshot', ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    if (signal !== null) process.kill(process.pid, signal);
    else process.exitCode = code ?? 1;
  });
}
