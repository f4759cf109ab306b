// The manifest schema: one row per option (the path named in each error), and a
// property that no input, however hostile, makes it throw instead of reporting.
import fc from 'fast-check';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { HOST_LIMIT_CAPS } from '../src/manifest/host-limits.js';
import { describeIssue, manifestSchema } from '../src/manifest/manifest-schema.js';

const base = { name: 'notes', module: './index.js' };
const problems = (manifest: unknown): string[] => {
  const result = manifestSchema().safeParse(manifest, { reportInput: true });
  return result.success ? [] : result.error.issues.map(describeIssue);
};

describe('manifest options, each checked and named by path', () => {
  it.each([
    ['a minimal manifest', base, []],
    ['the design example', { ...base, limits: { memoryMb: 64, timeoutMs: 2000, cpuMs: 1000, maxOutputBytes: 1048576 }, permissions: { default: 'allow', tools: { delete_note: 'ask' } }, capabilities: [] }, []],
    ['name with capitals', { ...base, name: 'Notes' }, ['name must be 1-64 lowercase letters, digits, ".", "_" or "-"']],
    ['missing name', { module: './index.js' }, ['name is required']],
    ['module outside the folder', { ...base, module: '../x.js' }, ['module must be a relative path to a .js or .mjs file inside the plugin folder']],
    ['absolute module', { ...base, module: '/etc/passwd.js' }, ['module must be a relative path to a .js or .mjs file inside the plugin folder']],
    ['module not JavaScript', { ...base, module: './index.ts' }, ['module must be a relative path to a .js or .mjs file inside the plugin folder']],
    ['memoryMb over the cap', { ...base, limits: { memoryMb: HOST_LIMIT_CAPS.memoryMb + 1 } }, [`limits.memoryMb must be at most ${HOST_LIMIT_CAPS.memoryMb} (the host's cap)`]],
    ['memoryMb under isolated-vm\'s minimum', { ...base, limits: { memoryMb: 4 } }, ['limits.memoryMb must be at least 8']],
    ['timeoutMs as a string', { ...base, limits: { timeoutMs: '2s' } }, ['limits.timeoutMs must be a number']],
    ['cpuMs fractional', { ...base, limits: { cpuMs: 1.5 } }, ['limits.cpuMs must be a whole number']],
    // Past safe integers, so zod's int() called it "no whole number": the cap is what it passes.
    ['cpuMs of 1e308', { ...base, limits: { cpuMs: 1e308 } }, [`limits.cpuMs must be at most ${HOST_LIMIT_CAPS.cpuMs} (the host's cap)`]],
    ['a tool decision under a name that is no tool name', { ...base, permissions: { tools: { 'ec\u001bho': 'allow' } } }, ['permissions.tools.ec\u001bho: this key must be 1-64 letters, digits, "_" or "-", starting with a letter or "_"']],
    ['maxOutputBytes over the cap', { ...base, limits: { maxOutputBytes: HOST_LIMIT_CAPS.maxOutputBytes * 2 } }, [`limits.maxOutputBytes must be at most ${HOST_LIMIT_CAPS.maxOutputBytes} (the host's cap)`]],
    ['an unknown limit, nothing like a known one', { ...base, limits: { diskMb: 1 } }, ['limits.diskMb: unknown key']],
    ['a bad default decision', { ...base, permissions: { default: 'sometimes' } }, ['permissions.default must be "allow", "deny" or "ask"']],
    ['capabilities as one string', { ...base, capabilities: 'log' }, ['capabilities must be an array (it is a string)']],
    ['permissions as a list', { ...base, permissions: [] }, ['permissions must be an object (it is an array)']],
    ['a bad tool decision', { ...base, permissions: { tools: { x: 'yes' } } }, ['permissions.tools.x must be "allow", "deny" or "ask"']],
    ['a rule without a decision', { ...base, permissions: { rules: [{ tool: 'x' }] } }, ['permissions.rules.0.decision must be "allow", "deny" or "ask"']],
    ['a rule with the long path form', { ...base, permissions: { rules: [{ tool: 'write_file', when: { path: { matches: ['/etc/**', 'secrets/**'], root: '/srv/workspace' } }, decision: 'deny' }] } }, []],
    ['a rule with a relative root', { ...base, permissions: { rules: [{ tool: 'w', when: { path: { matches: '/etc/**', root: 'srv' } }, decision: 'deny' }] } }, ['permissions.rules.0.when.path.root must be an absolute, normalized path (no "." or ".." segments, no glob characters)']],
    ['a rule with a root that climbs', { ...base, permissions: { rules: [{ tool: 'w', when: { path: { matches: '/etc/**', root: '/srv/../etc' } }, decision: 'deny' }] } }, ['permissions.rules.0.when.path.root must be an absolute, normalized path (no "." or ".." segments, no glob characters)']],
    ['a rule with an unknown condition key', { ...base, permissions: { rules: [{ tool: 'w', when: { path: { matches: '/etc/**', base: '/srv' } }, decision: 'deny' }] } }, ['permissions.rules.0.when.path.base: unknown key']],
    ['a rule condition without matches', { ...base, permissions: { rules: [{ tool: 'w', when: { path: { root: '/srv' } }, decision: 'deny' }] } }, ['permissions.rules.0.when.path must be a glob, a list of globs, or { "matches": globs, "root": "/absolute/folder" }']],
    ['a rule condition that is a number', { ...base, permissions: { rules: [{ tool: 'w', when: { path: 42 }, decision: 'deny' }] } }, ['permissions.rules.0.when.path must be a glob, a list of globs, or { "matches": globs, "root": "/absolute/folder" }']],
    ['a rule glob with a line terminator', { ...base, permissions: { rules: [{ tool: 'w', when: { path: '/etc/\n' }, decision: 'deny' }] } }, ['permissions.rules.0.when.path must not contain control characters']],
    ['a rule with an empty tool list', { ...base, permissions: { rules: [{ tool: [], decision: 'deny' }] } }, ['permissions.rules.0.tool must list at least one glob']],
    // zod leaves a "__proto__" key out of a record without a word: a deny under it would protect nothing.
    ['a tool decision under "__proto__"', { ...base, permissions: { tools: JSON.parse('{"__proto__":"deny","x":"allow"}') } }, ['permissions.tools.__proto__ cannot be a key here (JSON readers take it for the object\'s prototype); for a tool named "__proto__" write a rule: { "tool": "__proto__", "decision": ... }']],
    ['a rule condition under "__proto__"', { ...base, permissions: { rules: [{ tool: 'w', when: JSON.parse('{"__proto__":"/etc/**"}'), decision: 'deny' }] } }, ['permissions.rules.0.when.__proto__ cannot be a key here (JSON readers take it for the object\'s prototype)']],
    ['a secret named "__proto__"', { ...base, secrets: JSON.parse('{"__proto__":{"origins":["https://a.example"],"header":"x-key","format":"{secret}"}}') }, ['secrets.__proto__ cannot be a key here (JSON readers take it for the object\'s prototype)']],
    ['a capability that is not a name', { ...base, capabilities: ['rm -rf'] }, ['capabilities.0 must be a capability name']],
    ['a capability listed twice', { ...base, capabilities: ['log', 'log'] }, ['capabilities must not list a capability twice']],
    ['a description over 1000 characters', { ...base, description: 'x'.repeat(1001) }, ['description must be at most 1000 characters']],
    ['a bad realm', { ...base, realm: 'hot' }, ['realm must be "fresh" or "warm"']],
    ['an unknown top-level key', { ...base, colour: 'blue' }, ['colour: unknown key']],
    ['a misspelt top-level key', { ...base, limit: {} }, ['limit: unknown key (did you mean "limits"?)']],
    ['a misspelt nested key', { ...base, permissions: { defualt: 'allow' } }, ['permissions.defualt: unknown key (did you mean "default"?)']],
    ['a misspelt key inside a rule', { ...base, permissions: { rules: [{ tool: 'x', decision: 'deny', reasons: 'no' }] } }, ['permissions.rules.0.reasons: unknown key (did you mean "reason"?)']],
    ['two unknown limits, each with its own suggestion', { ...base, limits: { cpuMS: 1, gpuMs: 1 } }, ['limits.cpuMS: unknown key (did you mean "cpuMs"?); limits.gpuMs: unknown key (did you mean "cpuMs"?)']],
  ])('%s', (_case, manifest, expected) => {
    expect(problems(manifest)).toEqual(expected);
  });

  it('a lowered host cap is enforced by the schema', () => {
    const result = manifestSchema({ ...HOST_LIMIT_CAPS, cpuMs: 100 }).safeParse({ ...base, limits: { cpuMs: 200 } }, { reportInput: true });
    expect(result.success ? [] : result.error.issues.map(describeIssue)).toEqual(['limits.cpuMs must be at most 100 (the host\'s cap)']);
  });

  it('never throws: any input becomes a parsed manifest or a list of path-named problems', () => {
    const manifestLike = fc.record({
      name: fc.oneof(fc.string(), fc.anything()),
      module: fc.oneof(fc.string(), fc.anything()),
      limits: fc.oneof(fc.dictionary(fc.string(), fc.anything()), fc.anything()),
      permissions: fc.anything(),
      capabilities: fc.anything(),
    }, { requiredKeys: [] });
    fc.assert(
      fc.property(fc.oneof(manifestLike, fc.anything({ withBigInt: true, withNullPrototype: true })), (input) => {
        for (const problem of problems(input)) expect(typeof problem).toBe('string');
      }),
      { numRuns: 500 },
    );
  });

  it('every top-level key the schema accepts is in the README\'s manifest table', async () => {
    const readme = await readFile(new URL('../../../README.md', import.meta.url), 'utf8');
    const undocumented = Object.keys(manifestSchema().shape).filter((key) => !new RegExp(`^\\| \`${key}[\`.]`, 'm').test(readme));
    expect(undocumented).toEqual([]);
  });
});
