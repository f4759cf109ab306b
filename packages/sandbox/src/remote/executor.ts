// An executor: a process that serves sandboxed calls from hosts over NATS. It runs the same
// local sandbox as a host would (supervised child processes, shards, crash quarantine, the
// same limits), and only plugins it loaded itself from its own disk: a host names a plugin by
// fingerprint, never sends code to run. Capability requests go back to the host that made
// the call. SIGTERM-style drain: take no new calls, finish those in flight, then leave.
import { availableParallelism } from 'node:os';
import type { Msg, Subscription } from 'nats';
import { SandboxError } from '../errors/sandbox-error.js';
import { CAPABILITY_NAME } from '../options/check-sandbox-options.js';
import { CrashQuarantine } from '../host/crash-quarantine.js';
import { probationLanes, ShardedHost } from '../host/sharded-host.js';
import { NO_USAGE, type CapabilityHandler, type PluginSpec, type SandboxOutcome, type SandboxTask } from '../worker/worker-protocol.js';
import { HOST_LIMIT_CAPS, type PluginLimits } from '../manifest/host-limits.js';
import { crossPluginProblems } from '../plugin/cross-plugin-problems.js';
import { describePlugin } from '../plugin/describe-plugin.js';
import { discoverPluginFolders } from '../plugin/discover-plugins.js';
import { DEFAULT_TENANT } from '../plugin/default-tenant.js';
import { readPluginFolder } from '../plugin/read-plugin-folder.js';
import { tenancySettings, type QuarantineSettings } from '../tenancy-options.js';
import { checkSubjectPrefix, connectEngine } from './connect-engine.js';
import { offerableCapabilities } from './offerable-capabilities.js';
import { LEAVE_MS, leaveBus, settledWithin } from './leave-bus.js';
import { wholeNumber } from './whole-number.js';
import { DEFAULT_SUBJECT_PREFIX, EXECUTOR_QUEUE, OFFER_CLOCK_SKEW_MS, PROBE_TIMEOUT_MS, decode, encode, isToken, pluginFingerprint, randomToken, readTask, subjects, type CapabilityAnswer, type OfferAnswer, type RemoteTask, type ToHost } from './wire.js';

export interface ExecutorOptions {
  /** The NATS server, like nats://127.0.0.1:4222 (several comma-separated for a cluster). */
  readonly url: string;
  /** Plugin folders, or folders of them. Every executor of a fleet should hold the same ones. */
  readonly plugins: readonly string[];
  /** The subject prefix shared with the hosts (default "airlock"): one fleet per prefix. */
  readonly subjectPrefix?: string;
  /** Calls one tenant may run here at once. Default: available parallelism, at least 2. */
  readonly slots?: number;
  /**
   * Slots on top of `slots` that no single tenant can fill: a tenant may hold at most `slots`
   * here, so one tenant's flood never occupies every executor. Default 1.
   */
  readonly reserveSlots?: number;
  /** Sandbox processes inside this executor (tenants placed by stable hash). Default 2. */
  readonly processes?: number;
  /** OS-level resident-memory ceiling of each sandbox process, in MiB. Default 2048. */
  readonly processMemoryMb?: number;
  readonly caps?: Partial<PluginLimits>;
  readonly quarantine?: QuarantineSettings;
  /** How long an accepted call waits for its host's "go" before the slot is freed (it then never runs). Default 5000. */
  readonly reservationMs?: number;
  /**
   * The names of the capabilities your hosts offer beside the standard ones (the keys of
   * their `capabilities`). Needed only for a manifest that grants a group of them ("db" for
   * db.query and db.exec): without the names an executor cannot expand it as the host does,
   * and the plugin never matches its host's. Names granted one by one need nothing.
   */
  readonly capabilityNames?: readonly string[];
}

export interface ExecutorPlugin {
  readonly name: string;
  readonly dir: string;
  readonly tools: readonly string[];
}

export interface Executor {
  /** Random per process; hosts name it in messages about this executor. */
  readonly id: string;
  readonly plugins: readonly ExecutorPlugin[];
  /** Calls accepted and not yet answered. */
  inFlight(): number;
  /** Takes no new calls, finishes those in flight, then disconnects and stops its sandbox. */
  drain(): Promise<void>;
  /** Resolves once the executor has stopped (drained, closed, or lost for good). */
  readonly stopped: Promise<void>;
}

interface Slot {
  readonly token: string;
  /** The offer attempt it was reserved for; "go", "cancel" and every message to the host name it. */
  readonly attempt: string;
  readonly tenant: string;
  readonly replyTo: string;
  readonly task: RemoteTask;
  readonly plugin: PluginSpec;
  /** Set while reserved, cleared by "go". */
  lapse: ReturnType<typeof setTimeout> | undefined;
  /** Set once running. */
  controller: AbortController | undefined;
}

const DEFAULT_RESERVATION_MS = 5000;
/** How often the executor checks its own event loop for a stall. */
const STALL_TICK_MS = 250;

export async function startExecutor(options: ExecutorOptions): Promise<Executor> {
  const prefix = checkSubjectPrefix(options.subjectPrefix ?? DEFAULT_SUBJECT_PREFIX, 'options.subjectPrefix');
  const slots = wholeNumber(options.slots, Math.max(2, availableParallelism()), 1, 1024, 'options.slots');
  const reserveSlots = wholeNumber(options.reserveSlots, 1, 0, 1024, 'options.reserveSlots');
  // Like the local sandbox's reserve thread: the pool holds the reserve too.
  const capacity = slots + reserveSlots;
  const reservationMs = wholeNumber(options.reservationMs, DEFAULT_RESERVATION_MS, 100, 600_000, 'options.reservationMs');
  if (!Array.isArray(options.plugins) || options.plugins.length === 0) throw new SandboxError('INVALID_OPTION', 'options.plugins must list at least one plugin folder');
  const capabilityNames = checkCapabilityNames(options.capabilityNames);
  const tenancy = tenancySettings({ processes: options.processes, quarantine: options.quarantine });
  const caps: PluginLimits = { ...HOST_LIMIT_CAPS, ...options.caps };
  const id = randomToken();

  // Unreachable is the first thing worth knowing: fail before loading anything.
  const connection = await connectEngine(options.url, 'options.url', `airlock-executor-${id.slice(0, 8)}`, subjects.executorInbox(prefix, id));
  const quarantine = new CrashQuarantine(tenancy.quarantine);
  const host = new ShardedHost({ threads: capacity, processes: tenancy.processes, quarantine, loaderTenant: DEFAULT_TENANT, probationLanes: probationLanes(capacity), ...(options.processMemoryMb === undefined ? {} : { processMemoryMb: options.processMemoryMb }) });
  let plugins: Map<string, { spec: PluginSpec; info: ExecutorPlugin }>;
  try {
    plugins = await loadPlugins(host, options.plugins, caps, capabilityNames);
    // Start every shard's sandbox process now, not under the first call placed there.
    await Promise.all(Array.from({ length: tenancy.processes }, (_, shard) => host.run({ kind: 'ping' }, undefined, undefined, shard)));
  } catch (error) {
    await host.close();
    await connection.close();
    throw error;
  }

  const held = new Map<string, Slot>();
  const perTenant = new Map<string, number>();
  let draining = false;
  let resolveStopped: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (resolveStopped = resolve));
  let resolveIdle: (() => void) | undefined;

  // Whether an offer was refused since the last "free" notice: only then is a freed slot news.
  let refused = false;
  const release = (slot: Slot): void => {
    if (!held.delete(slot.attempt)) return;
    const left = (perTenant.get(slot.tenant) ?? 1) - 1;
    if (left === 0) perTenant.delete(slot.tenant);
    else perTenant.set(slot.tenant, left);
    if (held.size === 0) resolveIdle?.();
    if (refused && !draining) {
      refused = false;
      try {
        connection.publish(subjects.free(prefix), encode({ executor: id }));
      } catch {
        // Closed: hosts fall back to re-offering on their own timer.
      }
    }
  };

  const tell = (replyTo: string, message: ToHost): void => {
    try {
      connection.publish(replyTo, fitted(message, connection.info?.max_payload));
    } catch {
      // The connection closed: the host's liveness probe turns the call into SANDBOX_CRASH.
    }
  };

  const onOffer = (plugin: PluginSpec) => (message: Msg): void => {
    const answer = (reply: OfferAnswer): void => respond(message, reply);
    const body = decode(message.data);
    const task = readTask(body?.task);
    if (body === undefined || !isToken(body.token) || !isToken(body.attempt) || typeof body.deadline !== 'number' || typeof body.replyTo !== 'string' || !body.replyTo.startsWith(`${prefix}.host.`) || task === undefined) return answer({ accepted: false, reason: 'invalid' });
    // An offer that waited past its deadline (this executor was paused or slow): its host has
    // stopped waiting and offered the call elsewhere; reserving a slot for it would only block.
    if (Date.now() > body.deadline + OFFER_CLOCK_SKEW_MS) return answer({ accepted: false, reason: 'stale' });
    if (draining) return answer({ accepted: false, reason: 'draining' });
    if (held.size >= capacity) return ((refused = true), answer({ accepted: false, reason: 'busy' }));
    const tenant = task.kind === 'describe' ? DEFAULT_TENANT : task.tenant;
    // A tenant may hold `slots` here; the reserve stays for other tenants.
    if ((perTenant.get(tenant) ?? 0) >= slots) return ((refused = true), answer({ accepted: false, reason: 'tenant-busy' }));
    if (held.has(body.attempt)) return answer({ accepted: false, reason: 'invalid' });
    const slot: Slot = { token: body.token, attempt: body.attempt, tenant, replyTo: body.replyTo, task, plugin, lapse: undefined, controller: undefined };
    slot.lapse = setTimeout(() => {
      // No "go" came: the host took another executor or gave up. The call never ran here.
      release(slot);
      tell(slot.replyTo, { type: 'expired', token: slot.token, attempt: slot.attempt, executor: id });
    }, reservationMs);
    held.set(slot.attempt, slot);
    perTenant.set(tenant, (perTenant.get(tenant) ?? 0) + 1);
    answer({ accepted: true, executor: id });
  };

  const run = async (slot: Slot): Promise<void> => {
    const controller = new AbortController();
    slot.controller = controller;
    const capabilities: CapabilityHandler | undefined = slot.plugin.capabilities.length === 0 ? undefined : async (name, json) => {
      // Only to this call's own subject on its own host, which answers only while the call runs.
      const reply = await connection.request(slot.replyTo, encode({ type: 'capability', token: slot.token, attempt: slot.attempt, executor: id, name, json } satisfies ToHost), { timeout: slot.plugin.limits.timeoutMs });
      const answer = decode(reply.data) as CapabilityAnswer | undefined;
      if (answer?.ok !== true || typeof answer.json !== 'string') throw new Error('refused');
      return answer.json;
    };
    let outcome: SandboxOutcome;
    try {
      const task = localTask(slot.task, slot.plugin);
      const placement = task.kind === 'call' || task.kind === 'classify' ? host.placementOf(task.tenant, slot.plugin.name) : undefined;
      outcome = await host.run(task, controller.signal, capabilities, placement);
    } catch {
      outcome = { ok: false, code: 'SANDBOX_CRASH', message: 'the executor failed to run the call', usage: NO_USAGE };
    }
    tell(slot.replyTo, { type: 'result', token: slot.token, attempt: slot.attempt, executor: id, outcome });
    release(slot);
  };

  const onControl = (message: Msg): void => {
    const body = decode(message.data);
    if (body?.type === 'ping') return respond(message, { ok: true, inFlight: held.size });
    if (!isToken(body?.token) || !isToken(body?.attempt)) return;
    const slot = held.get(body.attempt as string);
    if (slot === undefined || slot.token !== body.token) return;
    if (body?.type === 'go' && slot.lapse !== undefined) {
      clearTimeout(slot.lapse);
      slot.lapse = undefined;
      void run(slot);
    } else if (body?.type === 'cancel') {
      if (slot.controller !== undefined) slot.controller.abort();
      else {
        clearTimeout(slot.lapse);
        release(slot);
      }
    }
  };

  const offerSubscriptions: Subscription[] = [];
  for (const { spec } of plugins.values()) {
    const fingerprint = pluginFingerprint(spec);
    const handle = onOffer(spec);
    offerSubscriptions.push(
      connection.subscribe(subjects.offer(prefix, fingerprint), { queue: EXECUTOR_QUEUE, callback: (error, message) => error === null && handle(message) }),
      connection.subscribe(subjects.direct(prefix, id, fingerprint), { callback: (error, message) => error === null && handle(message) }),
    );
  }
  connection.subscribe(subjects.executor(prefix, id), { callback: (error, message) => error === null && onControl(message) });
  await connection.flush();

  // This process stalled (SIGSTOP, a frozen VM) longer than a host waits for a probe: the
  // hosts have reported its calls as SANDBOX_CRASH, so they are aborted here, not finished.
  let lastTick = performance.now();
  const stallWatch = setInterval(() => {
    const now = performance.now();
    if (now - lastTick > PROBE_TIMEOUT_MS + STALL_TICK_MS) for (const slot of held.values()) slot.controller?.abort();
    lastTick = now;
  }, STALL_TICK_MS);
  stallWatch.unref();

  let finishing: Promise<void> | undefined;
  const finish = (): Promise<void> => {
    finishing ??= (async () => {
      clearInterval(stallWatch);
      await host.close();
      // Closed even while the server is down, so a drained executor exits (leave-bus.ts).
      await leaveBus(connection);
      resolveStopped();
    })();
    return finishing;
  };
  void connection.closed().then(() => finish());

  return {
    id,
    plugins: [...plugins.values()].map((plugin) => plugin.info),
    inFlight: () => held.size,
    async drain() {
      if (!draining) {
        draining = true;
        // No new offers reach this executor; reserved calls still run if their "go" comes, or lapse.
        for (const subscription of offerSubscriptions) subscription.unsubscribe();
        await settledWithin(connection.flush(), LEAVE_MS);
      }
      if (held.size > 0) await new Promise<void>((resolve) => (resolveIdle = resolve));
      await finish();
    },
    stopped,
  };
}

/**
 * A message as it goes on the bus. A result larger than the server carries (max_payload)
 * would be refused by the client and the host would wait for its backstop: it becomes a
 * small OUTPUT_TOO_LARGE instead, which the host gets at once.
 */
function fitted(message: ToHost, limit: number | undefined): Uint8Array {
  const data = encode(message);
  if (limit === undefined || data.length <= limit || message.type !== 'result') return data;
  const outcome: SandboxOutcome = { ok: false, code: 'OUTPUT_TOO_LARGE', message: `the result (${data.length} bytes on the bus) is larger than the NATS server carries (max_payload ${limit} bytes); raise max_payload or lower the plugin's maxOutputBytes`, usage: message.outcome.usage };
  return encode({ ...message, outcome });
}

/** Answers a request; a connection closing meanwhile must not throw out of a NATS callback. */
function respond(message: Msg, answer: unknown): void {
  try {
    message.respond(encode(answer));
  } catch {
    // Closed: the host's request times out, as for any lost executor.
  }
}

/** Whether `work` settled fine within `ms`. */

function localTask(task: RemoteTask, plugin: PluginSpec): SandboxTask {
  switch (task.kind) {
    case 'describe':
      return { kind: 'describe', plugin };
    case 'call':
      return { kind: 'call', plugin, tenant: task.tenant, tool: task.tool, callId: task.callId, argsJson: task.argsJson };
    case 'classify':
      return { kind: 'classify', plugin, tenant: task.tenant, calls: task.calls };
  }
}

/** The hosts' capability names, each a capability name (as createSandbox checks its `capabilities`' keys). */
function checkCapabilityNames(names: unknown): readonly string[] {
  if (names === undefined) return [];
  if (!Array.isArray(names)) throw new SandboxError('INVALID_OPTION', 'options.capabilityNames must be an array of capability names');
  names.forEach((name: unknown, index) => {
    if (typeof name !== 'string' || !CAPABILITY_NAME.test(name)) throw new SandboxError('INVALID_OPTION', `options.capabilityNames.${index}${typeof name === 'string' ? ` ("${name}")` : ''} is not a capability name (a letter, then letters, digits, "_" or ".")`);
  });
  return names as string[];
}

/** Reads, checks and loads every plugin folder the way a local sandbox does; throws listing every problem. */
async function loadPlugins(host: ShardedHost, paths: readonly string[], caps: PluginLimits, hostFunctions: readonly string[]): Promise<Map<string, { spec: PluginSpec; info: ExecutorPlugin }>> {
  const loaded = new Map<string, { spec: PluginSpec; info: ExecutorPlugin }>();
  const problems: string[] = [];
  for (const dir of await discoverPluginFolders(paths)) {
    // First read for the manifest's grants, then read as a host offering them (see offerable-capabilities.ts).
    const first = await readPluginFolder(dir, caps, offerableCapabilities([], hostFunctions));
    const folder = first.manifest === undefined ? first : await readPluginFolder(dir, caps, offerableCapabilities(first.manifest.capabilities ?? [], hostFunctions));
    const found = [...folder.problems];
    if (folder.manifest !== undefined && folder.spec !== undefined && found.length === 0) {
      // Warnings (fields nothing reads) are for `airlock check` and the embedding host, not for an executor.
      const tools = await describePlugin(host, folder.spec, folder.manifest, folder.manifestPath, found, []);
      if (found.length === 0) loaded.set(pluginFingerprint(folder.spec), { spec: folder.spec, info: { name: folder.manifest.name, dir, tools: tools.map((tool) => tool.name) } });
    }
    problems.push(...found);
  }
  if (problems.length > 0) throw new SandboxError('INVALID_PLUGIN', problems[0] as string, problems);
  const duplicates = crossPluginProblems([...loaded.values()].map(({ info }) => ({ name: info.name, dir: info.dir, tools: [...info.tools] })));
  if (duplicates.length > 0) throw new SandboxError('DUPLICATE_TOOL', duplicates[0] as string, duplicates);
  return loaded;
}
