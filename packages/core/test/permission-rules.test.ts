// A rule means exactly what it says: a tool rule hits only the tools it names, and a path
// rule cannot be stepped around with line terminators, control characters or `..`.
import { describe, expect, it, vi } from 'vitest';
import { createPolicy, toolNameMatcher, type PolicyRule, type ToolFailure } from '../src/index.js';
import { globMatcher } from '../src/permission/path-condition.js';
import { call, engine, tool } from './helpers.js';

const TOOLS = ['alpha', 'beta', 'gamma', 'delta', 'fs_read', 'fs_write'];

describe('tool-name rules', () => {
  it.each([
    ['beta', ['beta']],
    ['delta', ['delta']],
    ['fs_*', ['fs_read', 'fs_write']],
    ['{alpha,gamma}', ['alpha', 'gamma']],
    ['btea', []],
  ])('toolNameMatcher(%j) passed straight to filter keeps only %j', (glob, kept) => {
    expect(TOOLS.filter(toolNameMatcher(glob))).toEqual(kept);
    expect(TOOLS.filter(toolNameMatcher([glob]))).toEqual(kept);
  });

  it('takes exactly one argument, and answers a boolean for anything', () => {
    const matches = toolNameMatcher('beta');
    expect(matches.length).toBe(1);
    expect((matches as (name: unknown, extra: unknown) => unknown)('alpha', true)).toBe(false);
    expect((matches as (name: unknown) => unknown)(undefined)).toBe(false);
  });

  it('a deny on one tool leaves the others alone, with several rules in play', () => {
    const rules: PolicyRule[] = [
      { tool: 'beta', decision: 'deny' },
      { tool: 'fs_*', decision: 'ask' },
      { tool: ['gamma', 'nonexistent'], decision: 'deny' },
    ];
    const policy = createPolicy({ default: 'allow', rules });
    expect(TOOLS.map((name) => policy.decide(name, {}, undefined).decision)).toEqual(['allow', 'deny', 'deny', 'allow', 'ask', 'ask']);
  });
});

describe('path rules', () => {
  const denyEtc = { default: 'allow' as const, rules: [{ tool: 'write_file', when: { path: '/etc/**' }, decision: 'deny' as const, reason: 'no system files' }] };
  const policy = createPolicy(denyEtc);
  const decide = (path: string, p = policy) => p.decide('write_file', { path }, undefined);

  // The examples, then what an attacker tries next: other line terminators, C1
  // controls (NEL, CSI), NUL, DEL, bidi overrides, zero-width and tag characters.
  const hostile = [
    '/etc/cron.d/job\n', '/etc/hosts\r', '/etc/profile.d/a\u2028.sh', '/etc/\n/passwd', '/tmp/../etc/ld.so.conf.d/x\n.conf',
    '/etc/hosts\u2029', '/etc/hosts\u0085', '/etc/hosts\u0000', '/etc/hosts\u0000.png', '/etc/ho\u007fsts', '/etc/\u009b2Jhosts',
    '/etc/\u202ehosts', '/etc/hosts\u200b', '/etc/\u{e0041}hosts', '\u2028/etc/hosts', '/tmp/ok\n/../../etc/hosts', 'notes/a\u001b]8;;x\u001b\\.md',
  ];
  it.each(hostile)('refuses %j: a value with a control character is denied with a clear reason', (path) => {
    const verdict = decide(path);
    expect(verdict.decision).toBe('deny');
    expect(verdict.reason).toMatch(/argument "path" contains a control character \(\\(x[0-9a-f]{2}|u[0-9a-f]{4}|u\{[0-9a-f]{5}\}|n|r|t) at \d+\)/);
  });

  it('a list of paths: a deny applies when any entry matches, an allow only when every entry does; a value that is not a path cannot slip past a deny', () => {
    const with_ = (path: unknown) => policy.decide('write_file', { path } as never, undefined).decision;
    expect(with_(['/tmp/a', '/etc/passwd'])).toBe('deny');
    expect(with_(['/tmp/a', '/tmp/b'])).toBe('allow');
    expect(with_({ 0: '/etc/passwd' })).toBe('deny');
    expect(with_([['/etc/passwd']])).toBe('deny');
    expect(with_(42)).toBe('deny');
    expect(with_(['/tmp/ok', '/etc/x\n'])).toBe('deny');
    expect(policy.decide('write_file', {}, undefined).decision).toBe('allow'); // absent: the condition does not apply
    const allowNotes = createPolicy({ default: 'deny', rules: [{ tool: 'write_file', when: { path: 'notes/**' }, decision: 'allow' }] });
    expect(allowNotes.decide('write_file', { path: { 0: 'notes/a' } } as never, undefined).decision).toBe('deny');
    expect(allowNotes.decide('write_file', { path: ['notes/a', '/etc/x'] }, undefined).decision).toBe('deny');
    expect(allowNotes.decide('write_file', { path: ['notes/a', 'notes/b'] }, undefined).decision).toBe('allow');
  });

  it('a dotted path also names a key that holds the dot itself: an argument named "file.path" cannot slip past a rule on it', () => {
    const deny = createPolicy({ default: 'allow', rules: [{ tool: 'read', when: { 'file.path': '/etc/**' }, decision: 'deny' }] });
    const decide = (args: unknown) => deny.decide('read', args as never, undefined).decision;
    expect(decide({ 'file.path': '/etc/shadow' })).toBe('deny');
    expect(decide({ file: { path: '/etc/shadow' } })).toBe('deny');
    expect(decide({ outer: { 'file.path': '/etc/shadow' } })).toBe('allow'); // another argument's key: not what the rule names
    expect(decide({ 'file.path': '/tmp/a' })).toBe('allow');
    const nested = createPolicy({ default: 'allow', rules: [{ tool: 'read', when: { 'a.b.c': '/etc/**' }, decision: 'deny' }] });
    expect(nested.decide('read', { a: { 'b.c': '/etc/shadow' } } as never, undefined).decision).toBe('deny');
    // A key holding only part of the path, at any level, is followed too.
    const deep = createPolicy({ default: 'allow', rules: [{ tool: 'read', when: { 'file.meta.path': '/etc/**' }, decision: 'deny' }] });
    for (const args of [{ 'file.meta': { path: '/etc/shadow' } }, { 'file.meta': [{ path: '/etc/shadow' }] }, { file: { 'meta.path': '/etc/shadow' } }, { 'file.meta.path': '/etc/shadow' }]) {
      expect(deep.decide('read', args as never, undefined).decision).toBe('deny');
    }
    expect(createPolicy({ default: 'allow', rules: [{ tool: 'read', when: { 'a.b.c.d': '/etc/**' }, decision: 'deny' }] }).decide('read', { 'a.b': { 'c.d': '/etc/x' } } as never, undefined).decision).toBe('deny');
    const allow = createPolicy({ default: 'deny', rules: [{ tool: 'read', when: { 'file.path': '/srv/**' }, decision: 'allow' }] });
    expect(allow.decide('read', { 'file.path': '/srv/a' } as never, undefined).decision).toBe('allow');
    expect(allow.decide('read', { 'file.path': '/srv/a', file: { path: '/etc/x' } } as never, undefined).decision).toBe('deny');
  });

  it('a dotted path looks through lists: wrapping the object in a list cannot hide its value from a deny', () => {
    const denyNested = createPolicy({ default: 'allow', rules: [{ tool: 'copy', when: { 'files.path': '/etc/**' }, decision: 'deny' }] });
    const files = (value: unknown) => denyNested.decide('copy', { files: value } as never, undefined).decision;
    expect(files({ path: '/etc/passwd' })).toBe('deny');
    expect(files([{ path: '/tmp/a' }, { path: '/etc/passwd' }])).toBe('deny');
    expect(files([[{ path: '/etc/passwd' }]])).toBe('deny');
    expect(files([{ path: ['/tmp/a', '/etc/shadow'] }])).toBe('deny');
    expect(files([{ path: '/tmp/a' }, { other: '/tmp/b' }, null])).toBe('allow');
    // An entry without the key is looked through as a map: a string in it is judged (fail closed).
    expect(files([{ path: '/tmp/a' }, { other: '/etc/passwd' }, null])).toBe('deny');
    // A string where the path expects an object ("a path or { path }"): not judged as a path, a deny fails closed.
    expect(files(['/etc/passwd'])).toBe('deny');
    expect(files('/etc/passwd')).toBe('deny');
    expect(files([{ path: '/tmp/a' }, 'x'])).toBe('deny');
    expect(files([{ path: 7 }])).toBe('deny'); // not a path: a restricting rule fails closed
    expect(files([])).toBe('allow'); // nothing there: the condition does not apply
    expect(files([{ path: Array.from({ length: 200_000 }, (_, index) => `/tmp/${index}`).concat('/etc/passwd') }])).toBe('deny');
    const allowSrv = createPolicy({ default: 'deny', rules: [{ tool: 'copy', when: { 'files.path': '/srv/**' }, decision: 'allow' }] });
    const allowed = (value: unknown) => allowSrv.decide('copy', { files: value } as never, undefined).decision;
    expect(allowed([{ path: '/srv/a' }, { path: '/srv/b' }])).toBe('allow');
    expect(allowed([{ path: '/srv/a' }, { path: '/etc/b' }])).toBe('deny');
    expect(allowed([{ path: '/srv/a' }, { path: { 0: '/srv/b' } }])).toBe('deny');
    expect(allowed([{ path: '/srv/a' }, '/etc/b'])).toBe('deny');
  });

  it('a dotted path looks through maps too, whatever schema shape made them (anyOf, oneOf, $ref): an entry cannot hide its path under a key', () => {
    const denyNested = createPolicy({ default: 'allow', rules: [{ tool: 'copy', when: { 'files.path': '/etc/**' }, decision: 'deny' }] });
    const files = (value: unknown) => denyNested.decide('copy', { files: value } as never, undefined).decision;
    expect(files({ a: { path: '/etc/passwd' } })).toBe('deny');
    expect(files({ a: { path: '/tmp/x' }, b: { path: '/etc/shadow' } })).toBe('deny');
    expect(files({ group: { a: [{ path: '/etc/shadow' }] } })).toBe('deny');
    expect(files({ a: { path: '/tmp/x' }, b: { name: 'no path' }, count: 2 })).toBe('allow');
    // A map of "a path or { path }": the string entry is judged as the path itself.
    expect(files({ a: '/etc/shadow' })).toBe('deny');
    expect(files({ a: ['/etc/passwd'] })).toBe('deny');
    expect(files({ a: '/tmp/ok', b: { path: '/tmp/x' } })).toBe('allow');
    const allowSrv = createPolicy({ default: 'deny', rules: [{ tool: 'copy', when: { 'files.path': '/srv/**' }, decision: 'allow' }] });
    const allowed = (value: unknown) => allowSrv.decide('copy', { files: value } as never, undefined).decision;
    expect(allowed({ a: { path: '/srv/a' }, b: { path: '/srv/b' } })).toBe('allow');
    expect(allowed({ a: { path: '/srv/a' }, b: { path: '/etc/b' } })).toBe('deny');
    // The top level is not a map: a rule on "path" judges that argument, not another one's field.
    const denyPath = createPolicy({ default: 'allow', rules: [{ tool: 'copy', when: { path: '/etc/**' }, decision: 'deny' }] });
    expect(denyPath.decide('copy', { destination: { path: '/etc/passwd' } }, undefined).decision).toBe('allow');
  });

  it('a trailing slash names the same folder: a deny on it cannot be stepped around', () => {
    const exact = createPolicy({ default: 'allow', rules: [{ tool: 'remove_dir', when: { path: ['/srv/data', '/home/*/.ssh'] }, decision: 'deny' }] });
    const verdict = (path: string) => exact.decide('remove_dir', { path }, undefined).decision;
    for (const path of ['/srv/data', '/srv/data/', '/srv/./data/', '/srv/data//', '/home/bob/.ssh/']) expect(verdict(path), path).toBe('deny');
    expect(verdict('/srv/data2/')).toBe('allow');
    expect(verdict('/')).toBe('allow');
  });

  it('a model-chosen path cannot hold the event loop: globs run in time linear in the value (picomatch took 10 s on 4 KB)', () => {
    const policy = createPolicy({ default: 'allow', rules: [{ tool: 'read_log', when: { path: ['/var/log/**/audit-*-*-*.log', '/srv/**/*-*-*-*.log'] }, decision: 'deny' }] });
    const path = `/var/log/${'a-'.repeat(2000)}`;
    const started = performance.now();
    expect(policy.decide('read_log', { path }, undefined).decision).toBe('allow');
    expect(policy.decide('read_log', { path: `/srv/x/${'-'.repeat(4000)}` }, undefined).decision).toBe('allow');
    // A bound tens of times what the linear match needs, so load cannot turn it red; backtracking takes seconds.
    expect(performance.now() - started).toBeLessThan(1000);
    expect(policy.decide('read_log', { path: '/var/log/app/audit-1-2-3.log' }, undefined).decision).toBe('deny');
  });

  it('globs keep their meaning: dotfiles, braces, classes, extglobs, negation, the root', () => {
    const matches = (glob: string, value: string) => globMatcher([glob])(value);
    expect(matches('/home/*/.ssh/**', '/home/bob/.ssh/id_rsa')).toBe(true);
    expect(matches('**/*.{js,ts}', 'src/a.ts')).toBe(true);
    expect(matches('/tmp/[a-z]?x/**', '/tmp/abx/f')).toBe(true);
    expect(matches('/a/+(b|c)/**', '/a/bcb/d')).toBe(true);
    expect(matches('!/etc/**', '/etc/passwd')).toBe(false);
    expect(matches('!/etc/**', '/srv/x')).toBe(true);
    expect(matches('/*', '/')).toBe(false);
    expect(matches('/**', '/')).toBe(true);
    expect(() => createPolicy({ default: 'allow', rules: [{ tool: 't', when: { path: '/x/!(a)' }, decision: 'deny' }] })).toThrow(/needs lookaround/);
  });

  it('the refusal holds even for rules that would allow, and the reason shows no raw control character', () => {
    const allowNotes = createPolicy({ default: 'deny', rules: [{ tool: 'write_file', when: { path: 'notes/**' }, decision: 'allow' }] });
    const verdict = allowNotes.decide('write_file', { path: 'notes/a\u001b[2J.md' }, undefined);
    expect(verdict.decision).toBe('deny');
    expect(verdict.reason).toContain('\\x1b');
    expect(verdict.reason).not.toMatch(/\p{Cc}/u);
  });

  it.each(['/etc/cron.d/job\n', '/etc/hosts\r', '/etc/profile.d/a\u2028.sh', '/etc/\n/passwd', '/etc/ld.so.conf.d/x\n.conf', '/etc/x\u2029', '/etc/x\u0085'])(
    'the glob itself does not stop at a line terminator: /etc/** matches %j',
    (path) => {
      expect(globMatcher(['/etc/**'])(path)).toBe(true);
    },
  );

  it.each(['/etc/hosts', '/etc', '//etc/passwd', '/tmp/../etc/hosts', '/etc/./shadow', '/var/../../etc/hosts'])('denies %j by the rule', (path) => {
    expect(decide(path)).toEqual({ decision: 'deny', reason: 'no system files' });
  });

  it.each(['/tmp/notes.txt', '/etcetera/x', 'notes/todo.md', 'notes/./a/../b.md', 'caf\u00e9/menu.md', '\u65e5\u672c/a.md'])('allows %j', (path) => {
    expect(decide(path).decision).toBe('allow');
  });

  it('without a root, a relative path that climbs above its start is refused: nothing says where it lands', () => {
    const verdict = decide('notes/../../../../etc/hosts');
    expect(verdict.decision).toBe('deny');
    expect(verdict.reason).toContain('climbs above its starting folder, and the rule names no root');
  });

  describe('with a root', () => {
    const rooted = createPolicy({ default: 'allow', rules: [{ tool: 'write_file', when: { path: { matches: ['/etc/**', 'secrets/**'], root: '/srv/workspace' } }, decision: 'deny', reason: 'off limits' }] });

    it.each([
      ['notes/../../../../etc/hosts', 'climbs out of its root /srv/workspace'],
      ['../workspace2/x', 'climbs out of its root /srv/workspace'],
      ['..', 'climbs out of its root /srv/workspace'],
    ])('refuses %j: %s', (path, reason) => {
      const verdict = decide(path, rooted);
      expect(verdict.decision).toBe('deny');
      expect(verdict.reason).toContain(reason);
    });

    it.each(['secrets/key', 'notes/../secrets/key', './secrets/x', '/srv/workspace/secrets/key', '/etc/hosts', '/srv/workspace/../../etc/hosts'])('resolves %j, then the rule denies it', (path) => {
      expect(decide(path, rooted)).toEqual({ decision: 'deny', reason: 'off limits' });
    });

    it.each(['notes/todo.md', 'notes/../todo.md', '.', '/srv/workspace/notes/a.md', '/tmp/secrets/x'])('allows %j', (path) => {
      expect(decide(path, rooted).decision).toBe('allow');
    });

    it('an allow-list rule sees the resolved path', () => {
      const allowOnly = createPolicy({ default: 'deny', rules: [{ tool: 'write_file', when: { path: { matches: 'notes/**', root: '/srv/ws' } }, decision: 'allow' }] });
      expect(decide('notes/a.md', allowOnly).decision).toBe('allow');
      expect(decide('/srv/ws/notes/a.md', allowOnly).decision).toBe('allow');
      expect(decide('notes/../x.md', allowOnly).decision).toBe('deny');
      expect(decide('/notes/a.md', allowOnly).decision).toBe('deny');
    });
  });

  it.each([
    [{ path: { matches: '/etc/**', root: 'relative/dir' } }, 'policy.rules[0].when.path.root must be an absolute, normalized path'],
    [{ path: { matches: '/etc/**', root: '/srv/../etc' } }, 'policy.rules[0].when.path.root must be an absolute, normalized path'],
    [{ path: { matches: '/etc/**', root: '/srv/*' } }, 'policy.rules[0].when.path.root must be an absolute, normalized path'],
    [{ path: { root: '/srv' } }, 'policy.rules[0].when.path.matches must be a non-empty glob'],
    [{ path: { matches: '/etc/**', base: '/srv' } }, 'policy.rules[0].when.path.base is not a condition key'],
    [{ path: '' }, 'policy.rules[0].when.path must be a non-empty glob'],
    [{ path: '/etc/\n' }, 'policy.rules[0].when.path must not contain control characters'],
    [{ path: 42 }, 'policy.rules[0].when.path must be a non-empty glob'],
  ])('a bad condition %j is an error naming its path', (when, message) => {
    expect(() => createPolicy({ default: 'allow', rules: [{ tool: 'write_file', when, decision: 'deny' } as unknown as PolicyRule] })).toThrow(message);
  });

  it('through the engine: a refused path never reaches the tool body', async () => {
    const body = vi.fn(() => null);
    const e = engine([tool('write_file', { execute: body })], { policy: denyEtc });
    const results = await e.run(hostile.map((path, index) => call('write_file', { path }, `c${index}`)));
    for (const result of results) expect((result as ToolFailure).error.code).toBe('PERMISSION_DENIED');
    expect(body).not.toHaveBeenCalled();
  });
});
