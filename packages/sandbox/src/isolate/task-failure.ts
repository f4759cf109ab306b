// What a task that ended without its realm's own answer is told, and what it used: a limit
// it hit, a module that failed to load, a heap that outgrew its limit, a sandbox failure.
// Host messages are cut short and lose their stacks: no host path reaches a plugin or a model.
import type ivm from './ivm.js';
import type { SandboxFailureCode, SandboxOutcome, Usage } from '../worker/worker-protocol.js';
import type { PluginLoadFailure } from './realm.js';
import type { Watchdog } from './watchdog.js';

const MIB = 1024 * 1024;
/**
 * After a call, a heap past twice its limit (plus room for V8's young generation, which
 * isolated-vm's limit does not count) means the limit was outrun, not approached.
 */
const HEAP_OVERSHOOT_FACTOR = 2;
const HEAP_OVERSHOOT_SLACK_BYTES = 16 * MIB;

/** What a task used: a killed one reports the CPU last read before its isolate went (never less than nothing). */
export function usageOf(watchdog: Watchdog, bytesIn: number, bytesOut: number): Usage {
  return { cpuMs: round(watchdog.cpuMs()), wallMs: round(watchdog.wallMs()), bytesIn, bytesOut };
}

/**
 * CPU an isolate may use between two heap reads. Writing memory takes CPU: a core copies a few
 * GB/s, tens of MB per millisecond at best, while outrunning the check below takes more than
 * the limit plus HEAP_OVERSHOOT_SLACK_BYTES (24 MiB at the smallest limit). So the read (about
 * 10 µs, it takes the isolate's lock) runs once an isolate used this much CPU since the last
 * one, not after every call: a call that flattens a huge string is checked at once, and small
 * calls that each grow the heap a little are caught before they add up.
 */
const HEAP_CHECK_CPU_MS = 1;

/** Whether the heap is read after this task: `cpuMs` is what the task used. */
export function heapCheckDue(slot: { cpuSinceHeapCheckMs: number }, cpuMs: number): boolean {
  slot.cpuSinceHeapCheckMs += cpuMs;
  if (slot.cpuSinceHeapCheckMs < HEAP_CHECK_CPU_MS) return false;
  slot.cpuSinceHeapCheckMs = 0;
  return true;
}

/** What an isolate holds: its V8 heap and the array buffers isolated-vm allocated for it. */
export function heapBytesOf(isolate: ivm.Isolate): number {
  const heap = isolate.getHeapStatisticsSync();
  return heap.used_heap_size + heap.externally_allocated_size;
}

/**
 * Read when the isolate is idle after a task, so cheap (a few µs) and never waiting on a
 * lock (heapBytesOf). V8 can outgrow isolated-vm's limit without a collection noticing (flattening a huge
 * rope string, for one): such a task ends as MEMORY_LIMIT (with this message), and its isolate goes.
 */
export function heapOvershoot(heapBytes: number, memoryMb: number): string | undefined {
  if (heapBytes <= HEAP_OVERSHOOT_FACTOR * memoryMb * MIB + HEAP_OVERSHOOT_SLACK_BYTES) return undefined;
  // No figures: the model reads this (the host has the manifest).
  return 'exceeded its memory limit';
}

/** Compile and load errors (a SyntaxError, a bad import) are the plugin's own; host stacks are not. */
export function loadFailure(error: PluginLoadFailure, usage: Usage): SandboxOutcome {
  return { ok: false, code: 'TOOL_ERROR', message: `the plugin module failed to load: ${withoutStack(error.message, 500)}`, usage };
}

/** A task the watchdog killed, or whose sandbox failed under it: the code the host decided. */
export function killedOutcome(code: SandboxFailureCode, error: unknown, usage: Usage): SandboxOutcome {
  return { ok: false, code, message: code === 'SANDBOX_CRASH' ? `the sandbox failed: ${hostMessage(error)}` : describeLimit(code), usage };
}

function describeLimit(code: SandboxFailureCode): string {
  switch (code) {
    // No figure: the model reads this, and the manifest's limits are the host's (TIMEOUT
    // and OUTPUT_TOO_LARGE name none either). The host has the call's usage.
    case 'CPU_LIMIT':
      return 'used more than its CPU time limit';
    case 'TIMEOUT':
      return 'did not finish within its deadline';
    case 'MEMORY_LIMIT':
      return 'exceeded its memory limit';
    case 'ABORTED':
      return 'cancelled while running';
    default:
      return 'the sandbox failed';
  }
}

function hostMessage(error: unknown): string {
  return error instanceof Error ? withoutStack(error.message, 200) : 'unknown failure';
}

/**
 * A message up to the stack frames V8 appends (" at ..."), in at most `max` characters. Linear
 * whatever the message holds: a plugin's module threw a million spaces, and stripping the frames
 * with /\s+at .*$/ backtracked for seconds on the worker's thread (an outside attacker's find).
 */
export function withoutStack(message: string, max: number): string {
  const head = message.slice(0, 2 * max);
  const frames = head.search(/\sat /);
  return (frames === -1 ? head : head.slice(0, frames)).trimEnd().slice(0, max);
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
