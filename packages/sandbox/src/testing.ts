// @airlock/sandbox/testing: hooks for tests of the sandbox's supervision, kept off the main
// entry so no production code reaches for them. Fault injection proves every call still gets
// one result when a worker, the sandbox process or an isolate's creation fails.
import { openSandbox, sandboxHosts, type Sandbox, type SandboxOptions, type TestingHooks } from './sandbox.js';

export type { Fault } from './worker/worker-protocol.js';
export type { TestingHooks } from './sandbox.js';

/** createSandbox with test hooks: `faults` picks a fault (or none) for each call. */
export function createTestSandbox(options: SandboxOptions & TestingHooks = {}): Sandbox {
  const { faults, laneIdleMs, ...sandboxOptions } = options;
  return openSandbox(sandboxOptions, { faults, laneIdleMs });
}

/** The process ids hosting a sandbox's isolates: the child process, or this process in-process. */
export function sandboxProcessIds(sandbox: Sandbox): number[] {
  const host = sandboxHosts.get(sandbox);
  if (host === undefined) throw new TypeError('not a sandbox from createSandbox or createTestSandbox');
  return host.processIds();
}

export type FaultPicker = NonNullable<TestingHooks['faults']>;
