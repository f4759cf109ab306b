// An embedder's options are read by key: a misspelt or mistyped one is INVALID_OPTION naming
// it, never an option silently left out. Left out, a policy's mistake fails open (an outside
// tester's `tenant:` for `tenants:` let every tenant drop the database).
import { describe, expect, it } from 'vitest';
import { createEngine, createPolicy, DEFAULT_TENANT, ToolRegistry } from '../src/index.js';
import { call, engine, tool } from './helpers.js';

const refusal = (path: string, message?: RegExp) => expect.objectContaining({ code: 'INVALID_OPTION', details: expect.objectContaining({ path }), ...(message === undefined ? {} : { message: expect.stringMatching(message) }) });

describe('a policy is read by key', () => {
  it.each([
    ['a misspelt tenants', { default: 'deny', rules: [{ tool: 'drop_db', tenant: 'admin', decision: 'allow' }] }, 'policy.rules[0].tenant', /did you mean policy\.rules\[0\]\.tenants/],
    ['a misspelt when', { default: 'deny', rules: [{ tool: 'read', whem: { path: '/srv/**' }, decision: 'allow' }] }, 'policy.rules[0].whem', /did you mean policy\.rules\[0\]\.when/],
    ['a misspelt rules', { default: 'allow', rule: [{ tool: 'drop_db', decision: 'deny' }] }, 'policy.rule', /did you mean policy\.rules/],
    ['tenants as a string (read letter by letter)', { default: 'deny', rules: [{ tool: 'x', tenants: 'admin', decision: 'allow' }] }, 'policy.rules[0].tenants', /non-empty list/],
    ['an empty tenants (a rule for nobody)', { default: 'deny', rules: [{ tool: 'x', tenants: [], decision: 'allow' }] }, 'policy.rules[0].tenants', /non-empty list/],
    ['a rule without a tool', { default: 'deny', rules: [{ decision: 'allow' }] }, 'policy.rules[0].tool', /non-empty name or glob/],
    ['rules that are not a list', { default: 'deny', rules: { tool: 'x', decision: 'allow' } }, 'policy.rules', /list of rules/],
    ['a reason that is not text', { default: 'deny', rules: [{ tool: 'x', decision: 'deny', reason: 7 }] }, 'policy.rules[0].reason', /string/],
  ])('%s is INVALID_OPTION naming it', (_what, policy, path, message) => {
    expect(() => createPolicy(policy as never)).toThrow(refusal(path, message));
    expect(() => createEngine({ policy: policy as never })).toThrow(refusal(path, message));
  });

  it('a key the object inherits, answers from a getter or holds not enumerable still applies: read as before, never dropped', async () => {
    const reader = tool('read', { parameters: { type: 'object', properties: { path: { type: 'string' } } } });
    const shadow = call('read', { path: '/etc/shadow' });
    class ScopedAllow {
      tool = 'read';
      decision = 'allow' as const;
      get tenants(): string[] {
        return ['acme'];
      }
    }
    const template = { when: { path: '/srv/**' } };
    const rules = [{ tool: 'read', decision: 'deny' as const }];
    const policies = [
      { default: 'deny', rules: [Object.assign(Object.create(template) as object, { tool: 'read', decision: 'allow' })] },
      { default: 'deny', rules: [new ScopedAllow()] },
      Object.assign(Object.create({ rules }) as object, { default: 'allow' }),
      Object.defineProperty({ default: 'allow' }, 'rules', { value: rules, enumerable: false }),
    ];
    for (const policy of policies) {
      const [result] = await engine([reader], { policy: policy as never }).run([shadow], { tenant: 'evil' });
      expect(result).toMatchObject({ isError: true, error: { code: 'PERMISSION_DENIED' } });
    }
    // A misspelt key a prototype holds is refused as an own one is.
    expect(() => createPolicy(Object.assign(Object.create({ rule: rules }) as object, { default: 'allow' }) as never)).toThrow(refusal('policy.rule'));
  });

  it('a when that is no plain object, or names no argument, is refused: an allow with no conditions would allow every call', () => {
    class Conditions {
      get path(): string {
        return '/tmp/**';
      }
    }
    const hidden = Object.defineProperty({}, 'path', { value: '/tmp/**', enumerable: false });
    for (const when of [new Map([['path', '/tmp/**']]), new Conditions(), Object.create({ path: '/tmp/**' }), {}, { [Symbol('path')]: '/tmp/**' }]) {
      expect(() => createPolicy({ default: 'deny', rules: [{ tool: 'read', when: when as never, decision: 'allow' }] })).toThrow(refusal('policy.rules[0].when'));
    }
    // A condition that is not enumerable is still a condition.
    const policy = createPolicy({ default: 'deny', rules: [{ tool: 'read', when: hidden as never, decision: 'allow' }] });
    expect(policy.decide('read', { path: '/etc/shadow' }, undefined).decision).toBe('deny');
    expect(policy.decide('read', { path: '/tmp/a' }, undefined).decision).toBe('allow');
  });

  it('lists are read once, by index: a tenants or glob list that answers differently each time is judged by what was checked', () => {
    let reads = 0;
    const shifting = new Proxy(['acme'], { get: (target, key) => (key === 'length' ? ((reads += 1) === 1 ? 1 : 0) : Reflect.get(target, key)) });
    const scoped = createPolicy({ default: 'allow', rules: [{ tool: 'drop', tenants: shifting as never, decision: 'deny' }] });
    expect(scoped.decide('drop', {}, 'acme').decision).toBe('deny');
    const tenants = Object.assign(['acme'], { [Symbol.iterator]: function* () {} });
    expect(createPolicy({ default: 'allow', rules: [{ tool: 'drop', tenants, decision: 'deny' }] }).decide('drop', {}, 'acme').decision).toBe('deny');
    let globReads = 0;
    const globs = new Proxy(['/etc/**'], { get: (target, key) => (key === 'length' ? ((globReads += 1) === 1 ? 1 : 0) : Reflect.get(target, key)) });
    const denied = createPolicy({ default: 'allow', rules: [{ tool: 'read', when: { path: globs as never }, decision: 'deny' }] });
    expect(denied.decide('read', { path: '/etc/shadow' }, undefined).decision).toBe('deny');
  });

  it('a revoked proxy is INVALID_OPTION, and a policy with getters reads the same with sources as without', async () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(() => createPolicy(proxy as never)).toThrow(refusal('policy', /could not be read/));
    expect(() => createEngine(proxy as never)).toThrow(refusal('options', /could not be read/));
    expect(() => createEngine({ policy: proxy as never })).toThrow(refusal('policy', /could not be read/));
    await expect(engine([tool('t')]).run([], proxy as never)).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    class Config {
      get default(): 'deny' {
        return 'deny';
      }
    }
    const source = { tools: () => [tool('t')], policyRules: () => [] };
    const withSource = { tools: () => [tool('t'), tool('u')], policyRules: () => [{ tool: 'u', decision: 'allow' as const }] };
    for (const sources of [[source], [withSource]]) {
      const [result] = await createEngine({ sources, policy: new Config() as never }).run([call('t')]);
      expect(result).toMatchObject({ isError: true, error: { code: 'PERMISSION_DENIED' } });
    }
  });

  it('a call without a tenant is matched as the tenant "default", the one the sandbox runs it as', async () => {
    expect(DEFAULT_TENANT).toBe('default');
    const subject = engine([tool('whoami')], { policy: { default: 'allow', rules: [{ tool: 'whoami', tenants: ['default'], decision: 'deny' }] } });
    const [untenanted] = await subject.run([call('whoami')]);
    expect(untenanted).toMatchObject({ isError: true, error: { code: 'PERMISSION_DENIED' } });
    expect(subject.deniesOutright('whoami', undefined)).toBe(true);
    const [other] = await subject.run([call('whoami')], { tenant: 'acme' });
    expect(other!.isError).toBe(false);
  });
});

describe('createEngine and run read their options by key', () => {
  const policy = { default: 'allow' } as const;
  it.each([
    ['an unknown option', { policy, tool: [] }, 'options.tool', /did you mean options\.tools/],
    ['an unknown limit', { policy, limits: { maxOutputByte: 5 } }, 'options.limits.maxOutputByte', /did you mean options\.limits\.maxOutputBytes/],
    ['an observer that is not a function', { policy, observers: { onResult: 5 } }, 'options.observers.onResult', /function/],
    ['an unknown observer', { policy, observers: { onResults: () => undefined } }, 'options.observers.onResults', /did you mean options\.observers\.onResult/],
    ['tools that are not a list', { policy, tools: 5 }, 'options.tools', /list of tools/],
    ['guards that are not a list', { policy, guards: () => undefined }, 'options.guards', /list of functions/],
    ['a wrapper that is not a function', { policy, executeWrappers: [5] }, 'options.executeWrappers[0]', /function/],
  ])('%s is INVALID_OPTION naming it', (_what, options, path, message) => {
    expect(() => createEngine(options as never)).toThrow(refusal(path, message));
  });

  it('a getter or proxy trap that throws is INVALID_OPTION naming the object, not the raw error', () => {
    const getter = { policy, get limits(): never { throw new Error('boom'); } };
    expect(() => createEngine(getter as never)).toThrow(refusal('options', /could not be read/));
    const trapped = new Proxy({ policy }, { ownKeys: () => { throw new Error('boom'); } });
    expect(() => createEngine(trapped as never)).toThrow(refusal('options', /could not be read/));
    const rule = { tool: 'x', get decision(): never { throw new Error('boom'); } };
    expect(() => createEngine({ policy: { default: 'deny', rules: [rule as never] } })).toThrow(refusal('policy.rules[0]', /could not be read/));
  });

  it('run and tools() read a tenant from a getter once, and use what they read', async () => {
    const turn = () => {
      let reads = 0;
      return new (class Turn {
        get tenant(): string {
          reads += 1;
          return reads === 1 ? 'acme' : 'other';
        }
      })();
    };
    const subject = engine([tool('t', { execute: (_args, exec) => exec.tenant ?? null })], { policy: { default: 'allow', rules: [{ tool: 't', tenants: ['acme'], decision: 'deny' }] } });
    const [result] = await subject.run([call('t')], turn() as never);
    expect(result).toMatchObject({ isError: true, error: { code: 'PERMISSION_DENIED' } });
    expect(subject.tools('openai', turn() as never)).toEqual([]);
  });

  it('run\'s and tools()\'s options too: a misspelt tenant is refused, not run as no tenant', async () => {
    const subject = engine([tool('t')]);
    await expect(subject.run([call('t')], { tennant: 'acme' } as never)).rejects.toMatchObject(refusal('options.tennant', /did you mean options\.tenant/));
    await expect(subject.runMessage('openai', { role: 'assistant', tool_calls: [] }, { tennant: 'acme' } as never)).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    expect(() => subject.tools('openai', { tennant: 'acme' } as never)).toThrow(refusal('options.tennant'));
  });
});

describe('a host-supplied list or source that cannot be read', () => {
  const source = (overrides: Record<string, unknown>) => ({ tools: () => [], policyRules: () => [], ...overrides });
  it.each([
    ['a tools iterator that throws', { tools: { [Symbol.iterator]() { throw new TypeError('iterator broke'); } } }, 'options.tools', /could not be read \(iterator broke\)/],
    ['a source whose tools() throws', { sources: [source({ tools: () => { throw new Error('load failed'); } })] }, 'options.sources[0].tools()', /could not be read \(load failed\)/],
    ['a source whose tools() gives null', { sources: [source({ tools: () => null })] }, 'options.sources[0].tools()', /must give a list of tools/],
    ['a source whose policyRules() gives one rule, not a list', { sources: [source({ policyRules: () => ({ tool: 'x', decision: 'deny' }) })] }, 'options.sources[0].policyRules()', /must give a list of policy rules/],
    ['a source rule with a mistake', { sources: [source({}), source({ policyRules: () => [{ tool: 'x', decision: 'nope' }] })] }, 'options.sources[1].policyRules()[0].decision', /^options\.sources\[1\]\.policyRules\(\)\[0\]\.decision must be/],
    ['a registry that is not a ToolRegistry', { registry: {} }, 'options.registry', /must be a ToolRegistry/],
    ['an object made from ToolRegistry\'s prototype', { registry: Object.create(ToolRegistry.prototype) }, 'options.registry', /must be a ToolRegistry/],
  ])('%s is INVALID_OPTION naming it', (_name, options, path, message) => {
    expect(() => createEngine({ policy: { default: 'allow' }, ...(options as object) })).toThrow(refusal(path, message));
  });

  it('a mistake in the host\'s own rules is named by its place in the host\'s list, with sources or without', () => {
    const rules = [{ tool: 'x', decision: 'allow' }, { tool: 'x', whem: { p: '/a' }, decision: 'deny' }];
    const withSource = { sources: [{ tools: () => [], policyRules: () => [{ tool: 'y', decision: 'deny' as const }] }] };
    for (const extra of [{}, withSource]) {
      expect(() => createEngine({ policy: { default: 'allow', rules } as never, ...extra })).toThrow(refusal('policy.rules[1].whem'));
    }
  });
});

describe('a rule that can never apply', () => {
  it('a rule whose tool name or glob matches no tool of the engine is INVALID_OPTION, with a did-you-mean', () => {
    const tools = [tool('delete_file'), tool('read_file')];
    expect(() => createEngine({ tools, policy: { default: 'allow', rules: [{ tool: 'read_file', decision: 'allow' }, { tool: 'delete-file', decision: 'deny' }] } })).toThrow(
      refusal('policy.rules[1].tool', /^policy\.rules\[1\]\.tool "delete-file" matches no tool of this engine \(did you mean "delete_file"\?\), so the rule can never apply$/),
    );
    expect(() => createEngine({ tools, policy: { default: 'allow', rules: [{ tool: ['read_file', 'admin_*'], decision: 'deny' }] } })).toThrow(refusal('policy.rules[0].tool', /"admin_\*" matches no tool/));
    expect(() => createEngine({ tools, policy: { default: 'allow', rules: [{ tool: '*_file', decision: 'deny' }] } })).not.toThrow();
  });
});
