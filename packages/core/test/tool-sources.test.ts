// A tool source (a sandbox, for one) hands its tools, its permissions and its scheduling
// hook to the engine as one, so the permissions cannot be left behind.
import { describe, expect, it } from 'vitest';
import { AirlockError, createEngine, type PermissionPolicy, type PreSchedule, type ToolFailure, type ToolSource } from '../src/index.js';
import { call, tool } from './helpers.js';

function source(preSchedule?: PreSchedule): ToolSource {
  return {
    tools: () => [tool('write_file'), tool('delete_file')],
    policyRules: () => [
      { tool: ['write_file', 'delete_file'], when: { path: '/etc/**' }, decision: 'deny', reason: 'system files are off limits' },
      { tool: 'delete_file', decision: 'ask' },
    ],
    preSchedule,
  };
}

const codes = (results: readonly { isError: boolean }[]) => results.map((result) => (result.isError ? (result as ToolFailure).error.code : 'ok'));

describe('createEngine({ sources })', () => {
  it('registers the source\'s tools and keeps its rules under a permissive policy config', async () => {
    const engine = createEngine({ sources: [source()], policy: { default: 'allow' } });
    const results = await engine.run([call('write_file', { path: 'notes/a.md' }), call('write_file', { path: '/etc/hosts' }), call('delete_file', { path: 'notes/a.md' })]);
    expect(codes(results)).toEqual(['ok', 'PERMISSION_DENIED', 'APPROVAL_UNAVAILABLE']);
    expect((results[1] as ToolFailure).error.message).toContain('system files are off limits');
  });

  it('your rules join the source\'s, and the strictest matching rule still wins', async () => {
    const engine = createEngine({
      sources: [source()],
      policy: { default: 'deny', rules: [{ tool: '*', decision: 'allow' }] },
      approver: () => true,
    });
    const results = await engine.run([call('write_file', { path: '/etc/passwd' }), call('delete_file', { path: 'notes/a.md' }), call('write_file', { path: 'b.md' })]);
    expect(codes(results)).toEqual(['PERMISSION_DENIED', 'ok', 'ok']);
  });

  it('beside a PermissionPolicy object that allows everything, the source\'s denials still hold', async () => {
    const allowAll: PermissionPolicy = { decide: () => ({ decision: 'allow', reason: 'everything goes' }) };
    const engine = createEngine({ sources: [source()], policy: allowAll });
    const results = await engine.run([call('write_file', { path: '/etc/hosts' }), call('write_file', { path: 'notes/a.md' }), call('delete_file', { path: 'x' })]);
    expect(codes(results)).toEqual(['PERMISSION_DENIED', 'ok', 'APPROVAL_UNAVAILABLE']);
  });

  it('runs every source\'s scheduling hook, then your own, before each turn', async () => {
    const seen: string[] = [];
    const second: ToolSource = { tools: () => [tool('other')], policyRules: () => [], preSchedule: async () => void seen.push('second') };
    const engine = createEngine({
      sources: [source(async () => void seen.push('first')), second],
      policy: { default: 'allow' },
      preSchedule: async () => void seen.push('own'),
    });
    await engine.run([call('write_file', { path: 'a' })]);
    expect(seen).toEqual(['first', 'second', 'own']);
  });

  it.each([
    ['not an array', { not: 'an array' }, 'options.sources'],
    ['an entry without policyRules()', [{ tools: () => [] }], 'options.sources[0]'],
    ['a null entry', [null], 'options.sources[0]'],
  ])('%s is INVALID_OPTION naming the path', (_label, sources, path) => {
    const attempt = () => createEngine({ sources: sources as unknown as ToolSource[], policy: { default: 'allow' } });
    expect(attempt).toThrow(AirlockError);
    try {
      attempt();
    } catch (error) {
      expect(error).toMatchObject({ code: 'INVALID_OPTION', details: { path } });
    }
  });
});
