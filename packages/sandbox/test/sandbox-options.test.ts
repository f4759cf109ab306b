// Every createSandbox option is checked by path: one row per way to get it wrong.
import { AirlockError, ERROR_CODES } from '@airlock/core';
import { describe, expect, it } from 'vitest';
import { SandboxError, createSandbox, type SandboxOptions } from '../src/index.js';

function problemsOf(options: unknown): readonly string[] {
  try {
    createSandbox(options as SandboxOptions);
  } catch (error) {
    if (SandboxError.isInstance(error) && error.code === 'INVALID_OPTION') return error.problems;
    throw error;
  }
  throw new Error('createSandbox accepted the options');
}

describe('createSandbox options', () => {
  it.each([
    ['options that are not an object', 'process', 'options must be an object'],
    ['a mode typo', { mode: 'inprocess' }, 'options.mode must be "process" or "in-process"'],
    ['an unknown option', { thread: 2 }, 'options.thread: unknown option'],
    ['zero threads', { threads: 0 }, 'options.threads must be at least 1'],
    ['fractional threads', { threads: 1.5 }, 'options.threads must be a whole number'],
    ['a process ceiling of 0 MiB', { processMemoryMb: 0 }, 'options.processMemoryMb must be at least 128'],
    ['a process ceiling given as text', { processMemoryMb: '2048' }, 'options.processMemoryMb must be a number'],
    ['a cap above the host cap', { caps: { memoryMb: 4096 } }, "options.caps.memoryMb must be at most 512 (the host's cap)"],
    ['a memory cap below the minimum', { caps: { memoryMb: 4 } }, 'options.caps.memoryMb must be at least 8'],
    ['an unknown cap', { caps: { memory: 64 } }, 'options.caps.memory: unknown option'],
    ['caps that are not an object', { caps: 5 }, 'options.caps must be an object'],
    ['the removed per-tenant cap', { maxConcurrentPerTenant: 2 }, 'options.maxConcurrentPerTenant was replaced by work-conserving fair share: remove it (a lone tenant now uses every idle thread), and use options.fairShare.weights to favour tenants'],
    ['a capability that is not a function', { capabilities: { 'kv.get': 'nope' } }, 'options.capabilities.kv.get must be a function'],
    ['a capability name with a space', { capabilities: { 'Bad Name': () => null } }, 'options.capabilities: "Bad Name" is not a capability name (a letter, then letters, digits, "_" or ".")'],
    ['test-only faults on the main entry (they live in @airlock/sandbox/testing)', { faults: () => undefined }, 'options.faults: unknown option'],
  ])('%s', (_label, options, problem) => {
    expect(problemsOf(options)).toContain(problem);
  });

  it('an option the object inherits or answers from a getter is read and checked, as an own one is', () => {
    expect(problemsOf(Object.create({ threads: 0 }))).toContain('options.threads must be at least 1');
    expect(problemsOf(new (class { get caps() { return { memoryMb: 4096 }; } })())).toContain("options.caps.memoryMb must be at most 512 (the host's cap)");
    expect(problemsOf(Object.create({ thread: 2 }))).toContain('options.thread: unknown option');
  });

  it('a getter or proxy trap that throws is INVALID_OPTION, not the raw error', () => {
    const problem = 'options could not be read (a getter or proxy trap threw: boom)';
    expect(problemsOf({ get threads(): never { throw new Error('boom'); } })).toEqual([problem]);
    expect(problemsOf(new Proxy({}, { ownKeys: () => { throw new Error('boom'); } }))).toEqual([problem]);
    expect(problemsOf({ caps: { get memoryMb(): never { throw new Error('boom'); } } })).toEqual([problem]);
  });

  it('lists every problem, not just the first', () => {
    expect(problemsOf({ mode: 'x', threads: -1, caps: { cpuMs: 0 } })).toEqual([
      'options.mode must be "process" or "in-process"',
      'options.threads must be at least 1',
      'options.caps.cpuMs must be at least 1',
    ]);
  });

  it('accepts every option at a valid value', async () => {
    const sandbox = createSandbox({
      mode: 'process',
      threads: 2,
      processMemoryMb: 512,
      caps: { memoryMb: 128, timeoutMs: 10_000, cpuMs: 5000, maxOutputBytes: 4 * 1024 * 1024 },
      processes: 2,
      fairShare: { weights: { paying: 2 }, reserveThreads: 1 },
      quarantine: { crashes: 3, windowMs: 60_000, baseMs: 30_000, maxMs: 900_000 },
      capabilities: { 'kv.get': () => null },
    });
    await sandbox.close();
  });
});

describe('SandboxError in the error family', () => {
  it('is an AirlockError with a catalogued code, its problems also in details', () => {
    let caught: unknown;
    try {
      createSandbox({ threads: 0, processes: 0 } as SandboxOptions);
    } catch (error) {
      caught = error;
    }
    expect(SandboxError.isInstance(caught)).toBe(true);
    expect(AirlockError.isInstance(caught)).toBe(true);
    const error = caught as SandboxError;
    expect(ERROR_CODES).toContain(error.code);
    expect(error.problems.length).toBeGreaterThan(0);
    expect(error.details).toEqual({ problems: error.problems });
    // A core error is not a SandboxError.
    expect(SandboxError.isInstance(new AirlockError('INVALID_OPTION', 'x'))).toBe(false);
  });
});
