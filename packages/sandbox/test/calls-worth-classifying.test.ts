// Which calls of a turn a plugin classifier is asked about: only those whose verdict can
// put them in a parallel group with another call that runs.
import { defineTool, type ParsedCall, type RegisteredTool } from '@airlock/core';
import { describe, expect, it } from 'vitest';
import { callsWorthClassifying } from '../src/plugin/calls-worth-classifying.js';

const tool = (name: string, classifier: boolean): RegisteredTool => ({
  definition: defineTool({ name, description: name, parameters: { type: 'object' }, ...(classifier ? { isConcurrencySafe: () => true } : {}), execute: () => null }),
  // Never called: choosing calls reads only whether a classifier exists.
  validateArgs: undefined as unknown as RegisteredTool['validateArgs'],
  validateOutput: undefined,
});
const TOOLS = { plugin: tool('plugin', true), trusted: tool('trusted', true), barrier: tool('barrier', false) };

/** A turn written as tool names; "failed" is a call that failed parsing. */
function turn(...names: (keyof typeof TOOLS | 'failed')[]): ParsedCall[] {
  return names.map((name, index) => ({
    index,
    callId: `c${index}`,
    name,
    tool: name === 'failed' ? undefined : TOOLS[name],
    args: name === 'failed' ? undefined : {},
    failure: name === 'failed' ? { code: 'UNKNOWN_TOOL', message: 'no such tool' } : undefined,
  }));
}
const asked = (calls: ParsedCall[]): number[] => callsWorthClassifying(calls, (call) => call.name === 'plugin').map((call) => call.index);

describe('callsWorthClassifying', () => {
  it('asks nothing for a turn of one call, even beside calls that failed parsing', () => {
    expect(asked(turn('plugin'))).toEqual([]);
    expect(asked(turn('failed', 'plugin', 'failed'))).toEqual([]);
  });

  it('asks nothing when every neighbour is a barrier (no classifier): the call runs alone anyway', () => {
    expect(asked(turn('barrier', 'plugin', 'barrier'))).toEqual([]);
  });

  it('asks about calls next to another call that may run in parallel, across failed calls', () => {
    expect(asked(turn('plugin', 'plugin'))).toEqual([0, 1]);
    expect(asked(turn('plugin', 'failed', 'trusted'))).toEqual([0]);
    expect(asked(turn('barrier', 'plugin', 'plugin', 'barrier', 'plugin'))).toEqual([1, 2]);
  });

  it('never asks about tools classified outside the sandbox', () => {
    expect(asked(turn('trusted', 'trusted'))).toEqual([]);
  });
});
