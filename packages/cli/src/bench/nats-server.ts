// A throwaway nats-server on a free loopback port, for the remote-executor figures of
// `airlock bench`; undefined when the binary is not installed (the figures are then skipped).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export interface BenchNats {
  readonly url: string;
  /** CPU time the server has used so far, in µs (user + system, from /proc), or undefined off Linux. */
  cpuUs(): number | undefined;
  stop(): Promise<void>;
}

const BINARY = process.env.AIRLOCK_NATS_SERVER ?? 'nats-server';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no free port'))));
    });
  });
}

function cpuUsOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // Fields 14 and 15 of /proc/<pid>/stat: utime and stime, in clock ticks (100 per second on Linux).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return undefined;
  }
}

export async function startBenchNats(): Promise<BenchNats | undefined> {
  if (spawnSync(BINARY, ['--version'], { stdio: 'ignore' }).status !== 0) return undefined;
  const port = await freePort();
  const child: ChildProcess = spawn(BINARY, ['-a', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('Server is ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`nats-server exited with ${code}: ${seen}`)));
  });
  return {
    url: `nats://127.0.0.1:${port}`,
    cpuUs: () => cpuUsOf(child.pid),
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}
