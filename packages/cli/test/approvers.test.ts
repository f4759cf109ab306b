// Who answers `ask` on the command line: --approve-all approves everything, --approve NAME
// approves that tool only, and with neither (and no terminal) nothing is approved. Checked
// through the engine, so the codes are the ones a user sees.
import { createEngine, defineTool, type Approver, type ToolFailure, type ToolResult } from '@airlock/core';
import { describe, expect, it } from 'vitest';
import { approverFor } from '../src/support/approvers.js';

const tool = (name: string) => defineTool({ name, description: name, parameters: { type: 'object' }, execute: () => `${name} ran` });

/** Runs one call of each tool, every one of them `ask`, with the given approver. */
async function run(approver: Approver | undefined, names: readonly string[]): Promise<ToolResult[]> {
  const engine = createEngine({ tools: [tool('delete_file'), tool('write_file')], policy: { default: 'ask' }, ...(approver === undefined ? {} : { approver }) });
  return engine.run(names.map((name, index) => ({ id: `c${index}`, name, arguments: '{}' })));
}

const outcome = (result: ToolResult | undefined): string => (result === undefined ? 'missing' : result.isError ? (result as ToolFailure).error.code : 'ok');

describe('approverFor', () => {
  it('--approve-all approves every ask', async () => {
    const results = await run(approverFor({ approveAll: true, approve: [], interactive: false }), ['delete_file', 'write_file']);
    expect(results.map(outcome)).toEqual(['ok', 'ok']);
  });

  it('--approve NAME approves that tool only; the others, with no terminal, end as APPROVAL_UNAVAILABLE, saying the command line did not approve them', async () => {
    const results = await run(approverFor({ approveAll: false, approve: ['write_file'], interactive: false }), ['delete_file', 'write_file']);
    expect(results.map(outcome)).toEqual(['APPROVAL_UNAVAILABLE', 'ok']);
    expect((results[0] as ToolFailure).error.message).toContain('not approved on the command line');
  });

  it('a name is matched exactly: no prefix, no case folding, no inherited property', async () => {
    const approver = approverFor({ approveAll: false, approve: ['write'], interactive: false });
    expect((await run(approver, ['write_file'])).map(outcome)).toEqual(['APPROVAL_UNAVAILABLE']);
    const folded = approverFor({ approveAll: false, approve: ['WRITE_FILE', 'constructor'], interactive: false });
    expect((await run(folded, ['write_file'])).map(outcome)).toEqual(['APPROVAL_UNAVAILABLE']);
  });

  it('with no flag and no terminal there is no approver: ask ends as APPROVAL_UNAVAILABLE', async () => {
    const approver = approverFor({ approveAll: false, approve: [], interactive: false });
    expect(approver).toBeUndefined();
    expect((await run(approver, ['delete_file'])).map(outcome)).toEqual(['APPROVAL_UNAVAILABLE']);
  });
});
