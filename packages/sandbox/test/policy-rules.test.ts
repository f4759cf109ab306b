// A manifest speaks only for its own plugin's tools: its rules, even with "*", never
// reach another plugin's tools; its per-tool and default decisions become policy rules.
import { createPolicy } from '@airlock/core';
import { describe, expect, it } from 'vitest';
import type { LoadedPlugin } from '../src/plugin/loaded-plugin.js';
import { pluginPolicyRules } from '../src/plugin/plugin-policy-rules.js';
import { ruleMistakes } from '../src/plugin/rule-mistakes.js';

function plugin(name: string, tools: string[], permissions: LoadedPlugin['manifest']['permissions']): LoadedPlugin {
  return {
    name,
    dir: `/plugins/${name}`,
    manifest: { name, module: './index.js', ...(permissions === undefined ? {} : { permissions }) },
    spec: { key: name, name, source: '', limits: { memoryMb: 8, timeoutMs: 1, cpuMs: 1, maxOutputBytes: 1 }, realm: 'fresh', grants: { webAssembly: false, sharedArrayBuffer: false }, capabilities: [] },
    tools: tools.map((tool) => ({ name: tool, description: tool, parameters: { type: 'object' }, hasClassifier: false })),
  };
}

describe('manifest permissions as policy rules', () => {
  const hostile = plugin('greedy', ['greedy_tool'], { default: 'allow', rules: [{ tool: '*', decision: 'deny' }, { tool: 'write_file', decision: 'allow' }] });
  const files = plugin('files', ['write_file', 'delete_file'], { default: 'allow', tools: { delete_file: 'ask' }, rules: [{ tool: 'write_*', when: { path: '/etc/**' }, decision: 'deny', reason: 'no system files' }] });
  const policy = createPolicy({ default: 'deny', rules: [...pluginPolicyRules(hostile), ...pluginPolicyRules(files)] });

  it('a rule with "*" covers only its own plugin\'s tools', () => {
    expect(policy.decide('greedy_tool', {}, undefined).decision).toBe('deny');
    expect(policy.decide('write_file', { path: '/tmp/x' }, undefined).decision).toBe('allow');
  });

  it('a rule naming another plugin\'s tool is dropped, not applied', () => {
    expect(pluginPolicyRules(hostile).some((rule) => (Array.isArray(rule.tool) ? rule.tool : [rule.tool]).includes('write_file'))).toBe(false);
  });

  it('per-tool decisions, defaults and argument rules all hold', () => {
    expect(policy.decide('delete_file', {}, undefined).decision).toBe('ask');
    expect(policy.decide('write_file', { path: '/etc/hosts' }, undefined)).toEqual({ decision: 'deny', reason: 'no system files' });
    expect(policy.decide('unknown_tool', {}, undefined).decision).toBe('deny');
  });

  it('a manifest without permissions allows its tools', () => {
    expect(pluginPolicyRules(plugin('plain', ['p'], undefined))).toEqual([expect.objectContaining({ tool: 'p', decision: 'allow' })]);
  });
});

describe('a rule hits exactly the tools it names', () => {
  const four = ['alpha', 'beta', 'gamma', 'delta'];
  const decisions = (rules: NonNullable<LoadedPlugin['manifest']['permissions']>['rules']) => {
    const policy = createPolicy({ default: 'deny', rules: pluginPolicyRules(plugin('four', four, { default: 'allow', ...(rules === undefined ? {} : { rules }) })) });
    return four.map((name) => policy.decide(name, {}, undefined).decision);
  };

  it.each([
    ['deny beta', [{ tool: 'beta', decision: 'deny' as const }], ['allow', 'deny', 'allow', 'allow']],
    ['deny delta (the last)', [{ tool: 'delta', decision: 'deny' as const }], ['allow', 'allow', 'allow', 'deny']],
    ['deny alpha (the first)', [{ tool: 'alpha', decision: 'deny' as const }], ['deny', 'allow', 'allow', 'allow']],
    ['a misspelled name denies nothing', [{ tool: 'btea', decision: 'deny' as const }], ['allow', 'allow', 'allow', 'allow']],
    ['ask gamma, deny beta', [{ tool: 'gamma', decision: 'ask' as const }, { tool: 'beta', decision: 'deny' as const }], ['allow', 'deny', 'ask', 'allow']],
    ['a list and a glob', [{ tool: ['alpha', 'delta'], decision: 'ask' as const }, { tool: 'g*', decision: 'deny' as const }], ['ask', 'allow', 'deny', 'ask']],
  ])('%s', (_case, rules, expected) => {
    expect(decisions(rules)).toEqual(expected);
  });

  it('a rule is scoped to exactly the tools its pattern matches', () => {
    const rules = pluginPolicyRules(plugin('four', four, { rules: [{ tool: 'beta', decision: 'deny' }] }));
    expect(rules.at(-1)?.tool).toEqual(['beta']);
  });

  it('a pattern that matches no tool of the plugin is reported, each list entry on its own', () => {
    const manifest = plugin('four', four, { rules: [{ tool: 'btea', decision: 'deny' }, { tool: ['beta', 'gama'], decision: 'deny' }, { tool: '*', decision: 'ask' }, { tool: 'fs_*', decision: 'deny' }] }).manifest;
    expect(ruleMistakes(manifest, four.map((name) => ({ name, parameters: { type: 'object' } })))).toEqual([
      'permissions.rules.0.tool "btea" matches no tool of this plugin (its tools: alpha, beta, gamma, delta)',
      'permissions.rules.1.tool "gama" matches no tool of this plugin (its tools: alpha, beta, gamma, delta)',
      'permissions.rules.3.tool "fs_*" matches no tool of this plugin (its tools: alpha, beta, gamma, delta)',
    ]);
  });
});

describe('a when argument no tool of the rule declares', () => {
  const declared = { type: 'object', properties: { path: { type: 'string' }, options: { type: 'object', properties: { mode: { type: 'string' } } }, files: { type: 'array', items: { type: 'array', items: { type: 'object', properties: { path: { type: 'string' } } } } }, byName: { type: 'object', additionalProperties: { type: 'object', properties: { path: { type: 'string' } } } } } };
  const job = { type: 'object', properties: { path: { type: 'string' } } };
  const maps = {
    type: 'object',
    $defs: { job, jobs: { type: 'object', additionalProperties: { $ref: '#/$defs/job' } }, file: { $anchor: 'file', type: 'object', properties: { path: { type: 'string' } } } },
    properties: {
      byPattern: { type: 'object', patternProperties: { '^[a-z]+$': job } },
      byRef: { type: 'object', additionalProperties: { $ref: '#/$defs/job' } },
      viaRef: { $ref: '#/$defs/jobs' },
      list: { type: 'array', items: { $ref: '#/$defs/job' } },
      // As schemas are written in the wild: a type beside the $ref, an $anchor, entries that are lists, an allOf.
      typed: { type: 'object', additionalProperties: { type: 'object', $ref: '#/$defs/job' } },
      anchored: { type: 'object', additionalProperties: { $ref: '#file' } },
      lists: { type: 'object', additionalProperties: { type: 'array', items: { type: 'object', $ref: '#/$defs/job' } } },
      composed: { type: 'object', additionalProperties: { allOf: [{ properties: { path: { type: 'string' } } }] } },
    },
  };
  const tools = [
    { name: 'write_file', parameters: declared },
    { name: 'free_form', parameters: { type: 'object' } },
    { name: 'composed', parameters: { type: 'object', anyOf: [{ properties: { pth: {} } }] } },
    { name: 'copy_many', parameters: maps },
    // A map at the root: its keys are arguments too (an environment's PATH).
    { name: 'env_set', parameters: { type: 'object', properties: { mode: { type: 'string' } }, additionalProperties: { type: 'string' } } },
  ];
  const mistakes = (tool: string, when: Record<string, string>) => ruleMistakes({ name: 'p', module: './index.js', permissions: { rules: [{ tool, when, decision: 'deny' }] } }, tools);

  it.each([
    ['write_file', { pth: '/etc/**' }, ['permissions.rules.0.when.pth names no argument declared by write_file, so the rule can never apply']],
    ['write_file', { 'options.mdoe': 'x' }, ['permissions.rules.0.when.options.mdoe names no argument declared by write_file, so the rule can never apply']],
    ['write_file', { path: '/etc/**', 'options.mode': 'x' }, []],
    // The policy looks through lists (files.path reaches every entry's path): so does the check.
    ['write_file', { 'files.path': '/etc/**' }, []],
    ['write_file', { 'files.pth': '/etc/**' }, ['permissions.rules.0.when.files.pth names no argument declared by write_file, so the rule can never apply']],
    // The policy looks through a map's entries too (below the top level): so does the check.
    ['write_file', { 'byName.path': '/etc/**' }, []],
    ['write_file', { 'byName.pth': '/etc/**' }, []],
    ['write_file', { 'byName.other': '/etc/**' }, []],
    ['free_form', { pth: '/etc/**' }, []],
    ['composed', { pth: '/etc/**' }, []],
    ['*', { pth: '/etc/**' }, []],
    // The same map written with patternProperties, or with its entries behind a $ref, or behind a $ref itself: looked through.
    ['copy_many', { 'byPattern.path': '/etc/**' }, []],
    ['copy_many', { 'byRef.path': '/etc/**' }, []],
    ['copy_many', { 'viaRef.path': '/etc/**' }, []],
    ['copy_many', { 'typed.path': '/etc/**' }, []],
    ['copy_many', { 'anchored.path': '/etc/**' }, []],
    ['copy_many', { 'lists.path': '/etc/**' }, []],
    ['copy_many', { 'composed.path': '/etc/**' }, []],
    ['copy_many', { 'list.path': '/etc/**' }, []],
    ['copy_many', { 'list.pth': '/etc/**' }, ['permissions.rules.0.when.list.pth names no argument declared by copy_many, so the rule can never apply']],
    ['env_set', { PATH: '/tmp/**' }, []],
  ])('%s when %j: %j', (tool, when, expected) => {
    expect(mistakes(tool, when)).toEqual(expected);
  });
});

describe('a rule less strict than every tool\'s own decision', () => {
  const tools = [{ name: 'read', parameters: { type: 'object' } }, { name: 'write', parameters: { type: 'object', properties: { path: { type: 'string' } } } }];
  const mistakes = (permissions: NonNullable<LoadedPlugin['manifest']['permissions']>) => ruleMistakes({ name: 'p', module: './index.js', permissions }, tools);

  it.each([
    [{ default: 'deny' as const, rules: [{ tool: 'write', when: { path: 'notes/**' }, decision: 'allow' as const }] }, 'permissions.default is "deny"', 'allow'],
    [{ default: 'deny' as const, rules: [{ tool: '*', decision: 'ask' as const }] }, 'permissions.default is "deny"', 'ask'],
    [{ default: 'allow' as const, tools: { write: 'ask' as const }, rules: [{ tool: 'write', decision: 'allow' as const }] }, 'permissions.tools.write decides "ask"', 'allow'],
  ])('can never change a call: refused, naming the decision that overrules it (%#)', (permissions, source, decision) => {
    expect(mistakes(permissions)).toEqual([`permissions.rules.0 decides "${decision}", but ${source} for every tool it names, and the strictest decision wins: the rule can never change a call (to allow some calls, let the tool's own decision be "allow" and deny or ask for the others with rules)`]);
  });

  it.each([
    [{ default: 'allow' as const, rules: [{ tool: 'write', when: { path: '/etc/**' }, decision: 'deny' as const }] }],
    [{ default: 'deny' as const, tools: { write: 'allow' as const }, rules: [{ tool: '*', decision: 'allow' as const }] }],
    [{ default: 'ask' as const, rules: [{ tool: 'write', decision: 'ask' as const }] }],
  ])('a rule that can decide, or only repeats a decision, is not (%#)', (permissions) => {
    expect(mistakes(permissions)).toEqual([]);
  });
});

describe('a rule the policy itself would refuse', () => {
  it('a negated extglob (lookaround, not linear-time) is a problem at load, not a failure of the engine later', () => {
    const problems = ruleMistakes({ name: 'p', module: './index.js', permissions: { rules: [{ tool: 'write', when: { path: '/x/!(a)' }, decision: 'deny' }] } }, [{ name: 'write', parameters: { type: 'object', properties: { path: { type: 'string' } } } }]);
    expect(problems).toEqual([expect.stringMatching(/^permissions\.rules\.0: the glob "\/x\/!\(a\)" needs lookaround/)]);
  });
});
