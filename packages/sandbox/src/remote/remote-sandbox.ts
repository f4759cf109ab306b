// createRemoteSandbox: the same Sandbox as createSandbox (tools, policy rules, classifiers,
// results, fair share), whose plugin code runs on executor processes reached over NATS
// instead of in local child processes. This process keeps what a call must not leave:
// secrets, the workspace, the kv store and the embedder's own capabilities.
import { SandboxError } from '../errors/sandbox-error.js';
import { openSandbox, type Sandbox, type SandboxOptions } from '../sandbox.js';
import { checkHostGroup, checkSubjectPrefix, connectEngine } from './connect-engine.js';
import { RemoteHost } from './remote-host.js';
import { DEFAULT_HOST_GROUP, DEFAULT_SUBJECT_PREFIX, randomToken, subjects } from './wire.js';
import { wholeNumber } from './whole-number.js';

export interface RemoteSandboxOptions extends Omit<SandboxOptions, 'mode' | 'threads' | 'processes' | 'processMemoryMb' | 'quarantine'> {
  /** The NATS server the executors serve on, like nats://127.0.0.1:4222 (comma-separate a cluster's servers). */
  readonly url: string;
  /** Plugin folders to load at once (the executors must hold the same ones); or call loadPlugins later. */
  readonly plugins?: readonly string[];
  /** The subject prefix shared with the executors (default "airlock"): one fleet per prefix. */
  readonly subjectPrefix?: string;
  /**
   * This host's name on the bus (default "default"): everything it receives travels under
   * `<prefix>.host.<hostGroup>.>`, so a NATS user allowed only that subtree cannot read or
   * answer another host's calls (docs/security.md, "The bus must be private"). Replicas of
   * one service may share one; each process adds a random id of its own.
   */
  readonly hostGroup?: string;
  /**
   * Calls this host keeps on executors at once; more wait here, in fair share across tenants.
   * Default 32.
   */
  readonly maxInFlight?: number;
  /**
   * How long a call may keep finding every executor busy before it ends as
   * ABORTED_BEFORE_DISPATCH (never run). Default 10000.
   */
  readonly dispatchTimeoutMs?: number;
  /** How often an executor running this host's calls is probed; a dead one fails them with SANDBOX_CRASH. Default 250. */
  readonly livenessMs?: number;
}

const DEFAULT_MAX_IN_FLIGHT = 32;
const DEFAULT_DISPATCH_TIMEOUT_MS = 10_000;
const DEFAULT_LIVENESS_MS = 250;

/**
 * Connects to the NATS server (SandboxError ENGINE_UNREACHABLE, fast, when it cannot) and
 * returns a Sandbox whose calls run on `airlock executor` processes. Plugin folders are read
 * here too: their manifests are this host's policy, and a call is offered only to executors
 * that loaded the identical plugin. `close()` disconnects.
 */
export async function createRemoteSandbox(options: RemoteSandboxOptions): Promise<Sandbox> {
  if (typeof options !== 'object' || options === null) throw new SandboxError('INVALID_OPTION', 'options must be an object with a url');
  const { url, plugins, subjectPrefix, hostGroup, maxInFlight, dispatchTimeoutMs, livenessMs, ...local } = options;
  const prefix = checkSubjectPrefix(subjectPrefix ?? DEFAULT_SUBJECT_PREFIX, 'options.subjectPrefix');
  const group = checkHostGroup(hostGroup ?? DEFAULT_HOST_GROUP, 'options.hostGroup');
  const settings = {
    threads: wholeNumber(maxInFlight, DEFAULT_MAX_IN_FLIGHT, 1, 1024, 'options.maxInFlight'),
    dispatchTimeoutMs: wholeNumber(dispatchTimeoutMs, DEFAULT_DISPATCH_TIMEOUT_MS, 1, 600_000, 'options.dispatchTimeoutMs'),
    livenessMs: wholeNumber(livenessMs, DEFAULT_LIVENESS_MS, 10, 60_000, 'options.livenessMs'),
  };
  if (plugins !== undefined && !Array.isArray(plugins)) throw new SandboxError('INVALID_OPTION', 'options.plugins must be a list of folders');
  const id = randomToken();
  const connection = await connectEngine(url, 'options.url', 'airlock-host', subjects.hostInbox(prefix, group, id));
  const host = new RemoteHost({ connection, url, prefix, group, id, dispatchTimeoutMs: settings.dispatchTimeoutMs, livenessMs: settings.livenessMs });
  let sandbox: Sandbox;
  try {
    sandbox = openSandbox({ ...local, threads: settings.threads }, {}, { host });
  } catch (error) {
    await host.close();
    throw error;
  }
  if (plugins !== undefined && plugins.length > 0) {
    try {
      await sandbox.loadPlugins(plugins);
    } catch (error) {
      await sandbox.close();
      throw error;
    }
  }
  return sandbox;
}
