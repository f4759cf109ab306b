// A real nats-server on a free loopback port, and `airlock executor` processes connected to
// it, for the remote-executor suites. Without the nats-server binary these suites are skipped
// on a developer's machine with a warning; under CI they fail loudly (.ci/run installs it
// and sets AIRLOCK_REQUIRE_NATS=1).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { BIN, ROOT } from './run-cli.js';

export const NATS_BINARY = process.env.AIRLOCK_NATS_SERVER ?? 'nats-server';

export function natsAvailable(): boolean {
  const found = spawnSync(NATS_BINARY, ['--version'], { stdio: 'ignore' }).status === 0;
  // .ci/run sets AIRLOCK_REQUIRE_NATS; any CI sets CI=true.
  if (!found && (process.env.CI === 'true' || process.env.AIRLOCK_REQUIRE_NATS === '1')) {
    throw new Error(`${NATS_BINARY} is not installed, and CI must run the remote-executor tests: install it (apt-get install -y nats-server), as .ci/run does`);
  }
  if (!found) process.stderr.write(`warning: ${NATS_BINARY} not found; the remote-executor tests are skipped (apt-get install -y nats-server)\n`);
  return found;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Resolves once the process printed a line matching `ready`; rejects if it exits first. */
function waitForLine(child: ChildProcess, stream: 'stdout' | 'stderr', ready: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString();
      const match = ready.exec(seen);
      if (match !== null) {
        child[stream]?.off('data', onData);
        child.off('exit', onExit);
        resolve(match);
      }
    };
    const onExit = (code: number | null): void => reject(new Error(`exited with ${code} before it was ready:\n${seen}`));
    child[stream]?.on('data', onData);
    child.once('exit', onExit);
  });
}

export interface NatsServer {
  readonly url: string;
  readonly pid: number | undefined;
  /** Messages the server received and sent so far (its monitoring endpoint, /varz). */
  messages(): Promise<{ readonly in: number; readonly out: number }>;
  stop(): Promise<void>;
}

/** `extra`: more nats-server flags (`--user u --pass p`, `--auth token`). */
export async function startNats(extra: readonly string[] = []): Promise<NatsServer> {
  const port = await freePort();
  const monitor = await freePort();
  const child = spawn(NATS_BINARY, ['-a', '127.0.0.1', '-p', String(port), '-m', String(monitor), ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
  await waitForLine(child, 'stderr', /Server is ready/);
  return {
    url: `nats://127.0.0.1:${port}`,
    pid: child.pid,
    async messages() {
      const varz = (await (await fetch(`http://127.0.0.1:${monitor}/varz`)).json()) as { in_msgs: number; out_msgs: number };
      return { in: varz.in_msgs, out: varz.out_msgs };
    },
    stop: () => stopProcess(child),
  };
}

export interface ExecutorProcess {
  readonly id: string;
  readonly child: ChildProcess;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  readonly exited: Promise<number | null>;
}

/** `airlock executor`, run with the flag isolated-vm needs so the pid is the executor itself (no re-exec). */
export async function startExecutorProcess(url: string, plugins: readonly string[], extra: readonly string[] = []): Promise<ExecutorProcess> {
  const args = ['--no-node-snapshot', BIN, 'executor', '--connect', url, ...plugins.flatMap((dir) => ['--plugins', dir]), ...extra];
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  let text = '';
  child.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const match = await waitForLine(child, 'stderr', /airlock executor ([0-9a-f]{32}): serving/);
  return { id: match[1] as string, child, stderr: () => text, exited };
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}
