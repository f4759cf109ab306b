// docs/plugins.md, checked: a plugin with a real npm dependency, bundled with the
// esbuild recipe the guide gives, loads and runs in the real sandbox; and the mistakes
// a new author makes are reported by `airlock check` as sentences about their own file.
import { createEngine } from '@airlock/core';
import { createSandbox } from '@airlock/sandbox';
import { build } from 'esbuild';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { airlock, ROOT } from './support/run-cli.js';

const AUTHORING = join(ROOT, 'test/fixtures/authoring');
const BROKEN = join(AUTHORING, 'broken');

describe('a plugin with an npm dependency, bundled as docs/plugins.md says', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'airlock-bundled-'));
    await copyFile(join(AUTHORING, 'bundled/airlock.plugin.json'), join(dir, 'airlock.plugin.json'));
    // The guide's recipe, through esbuild's JS API: one self-contained ES module.
    await build({
      entryPoints: [join(AUTHORING, 'bundled/src/index.js')],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      outfile: join(dir, 'dist/index.js'),
      logLevel: 'silent',
    });
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('the bundle carries the dependency: no import is left for the sandbox to refuse', async () => {
    const bundle = await readFile(join(dir, 'dist/index.js'), 'utf8');
    expect(bundle).not.toMatch(/^\s*import\s/m);
    expect(bundle).toContain('node_modules/ms/index.js');
  });

  it('loads and answers through the real sandbox', async () => {
    const sandbox = createSandbox({ threads: 1 });
    try {
      await sandbox.loadPlugins([dir]);
      const engine = createEngine({ tools: sandbox.tools(), policy: { default: 'deny', rules: sandbox.policyRules() }, preSchedule: sandbox.preSchedule });
      const [ok, bad] = await engine.run([
        { id: 'c1', name: 'parse_duration', arguments: '{"text":"1.5 days"}' },
        { id: 'c2', name: 'parse_duration', arguments: '{"text":"soon"}' },
      ]);
      expect(ok).toMatchObject({ isError: false, value: { milliseconds: 129_600_000, readable: '2 days' } });
      expect(bad).toMatchObject({ isError: true, error: { code: 'TOOL_ERROR', message: expect.stringContaining('not a duration: soon') } });
    } finally {
      await sandbox.close();
    }
  });

  it('airlock check passes the bundle and names the unbundled source\'s import', async () => {
    const bundled = await airlock(['check', dir]);
    expect(bundled.code).toBe(0);
    expect(bundled.stdout).toContain('tools: parse_duration');
    const bare = await airlock(['check', join(BROKEN, 'bare-import')]);
    expect(bare.code).toBe(1);
    expect(bare.stdout).toContain(`${join(BROKEN, 'bare-import/index.js')}: imports "ms", but a plugin is one self-contained file: bundle its dependencies in`);
  });
});

describe('airlock check explains an author\'s mistakes, attributed to their file', () => {
  const problemsOf = async (fixture: string): Promise<string[]> => {
    const { code, stdout } = await airlock(['check', join(BROKEN, fixture), '--json']);
    expect(code).toBe(1);
    return (JSON.parse(stdout) as { plugins: { problems: string[] }[] }).plugins.flatMap((plugin) => plugin.problems);
  };

  it('a module without a default export is a load problem, not a sandbox crash', async () => {
    const [problem, ...rest] = await problemsOf('no-default');
    expect(rest).toEqual([]);
    expect(problem).toBe(`${join(BROKEN, 'no-default/index.js')}: has no default export; a plugin module ends with \`export default { tools: [...] }\` (see docs/plugins.md)`);
    expect(problem).not.toContain('SANDBOX_CRASH');
  });

  it('a module whose compile needs more than 256 MiB outside its heap (V8\'s parser) is refused at load, saying so', async () => {
    // 360,000 object literals at the top level: about 1.4 MB of source, some 360 MiB of the parser's zone memory.
    const dir = await mkdtemp(join(tmpdir(), 'airlock-costly-compile-'));
    try {
      await writeFile(join(dir, 'index.js'), `if (globalThis.never) { globalThis.data = [${Array.from({ length: 360_000 }, () => '{a}').join(',')}]; }\nexport default { tools: [{ name: 'ok', description: 'd', parameters: { type: 'object' }, execute: () => 1 }] };\n`);
      await writeFile(join(dir, 'airlock.plugin.json'), JSON.stringify({ name: 'costly-compile', module: './index.js', limits: { memoryMb: 256 } }));
      const { code, stdout } = await airlock(['check', dir, '--json']);
      expect(code).toBe(1);
      const [problem] = (JSON.parse(stdout) as { plugins: { problems: string[] }[] }).plugins.flatMap((plugin) => plugin.problems);
      expect(problem).toMatch(/could not be loaded: compiling the module took \d+ MiB of memory outside its heap limit, more than 256 MiB/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a CommonJS module is told that plugins are ES modules', async () => {
    const [problem] = await problemsOf('commonjs');
    expect(problem).toMatch(new RegExp(`^${join(BROKEN, 'commonjs/index.js')}: plugins are ES modules; this one looks like CommonJS \\(module is not defined in a plugin\\)`));
    expect(problem).toContain('export default { tools: [...] }');
  });

  it('a syntax error names the module file, line and column', async () => {
    const [problem] = await problemsOf('syntax-error');
    expect(problem).toMatch(new RegExp(`^${join(BROKEN, 'syntax-error/index.js')}:3:\\d+: could not be loaded: Unexpected token`));
  });

  it('misspelt manifest keys and tool names get a "did you mean"', async () => {
    const manifest = join(BROKEN, 'misspelt/airlock.plugin.json');
    expect((await problemsOf('misspelt')).sort()).toEqual([
      `${manifest}: limit: unknown key (did you mean "limits"?)`,
      `${manifest}: permissions.defualt: unknown key (did you mean "default"?)`,
    ]);
    expect(await problemsOf('misnamed-tool')).toEqual([`${resolve(BROKEN, 'misnamed-tool/airlock.plugin.json')}: permissions.tools.echoo names no tool of this plugin (did you mean "echo"?)`]);
  });

  it('fields of a tool that nothing reads are warned of (the plugin still loads): host-only ones and misspellings', async () => {
    const dir = join(BROKEN, 'ignored-fields');
    const { code, stdout } = await airlock(['check', dir, '--json']);
    expect(code).toBe(0);
    const label = `${join(dir, 'index.js')}: tools[0] ("lookup")`;
    expect((JSON.parse(stdout) as { plugins: { warnings: string[] }[] }).plugins[0]!.warnings).toEqual([
      `${label}: "timeoutMs" is ignored: the manifest's limits set it, not the plugin's code`,
      `${label}: "isConcurrentSafe" is ignored: a plugin's tool has no such field (did you mean "isConcurrencySafe"?)`,
      `${label}: "\u001b[2Jwiped" is ignored: a plugin's tool has no such field`,
      `${label}: "x: secrets.OPENAI_API_KEY: " is ignored: a plugin's tool has no such field`,
    ]);
    const text = await airlock(['check', dir]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('"\\x1b[2Jwiped" is ignored');
    expect(text.stdout).not.toContain('\u001b');
    // The hint for a missing secret is the host's, never a plugin's to give.
    expect(text.stdout).not.toContain('--secret');
  });

  it('a plugin with many ignored fields gets twenty warnings and a count, not one line per field', async () => {
    const dir = join(BROKEN, 'many-ignored-fields');
    const { code, stdout } = await airlock(['check', dir, '--json']);
    expect(code).toBe(0);
    const warnings = (JSON.parse(stdout) as { plugins: { warnings: string[] }[] }).plugins[0]!.warnings;
    expect(warnings).toHaveLength(21);
    expect(warnings[0]).toBe(`${join(dir, 'index.js')}: tools[0] ("tool_0"): "extra" is ignored: a plugin's tool has no such field`);
    expect(warnings[20]).toBe(`${join(dir, 'index.js')}: 10 more warnings about its tools not listed`);
  });

  it('a tool whose description is longer than a provider takes, or whose schema every request would carry at great weight, is warned of (it still loads)', async () => {
    const dir = join(BROKEN, 'heavy-schemas');
    const { code, stdout } = await airlock(['check', dir, '--json']);
    expect(code).toBe(0);
    const module = join(dir, 'index.js');
    expect((JSON.parse(stdout) as { plugins: { tools: string[]; warnings: string[] }[] }).plugins[0]).toMatchObject({
      tools: ['long_description', 'wide_parameters', 'small'],
      warnings: [
        `${module}: tools[0] ("long_description"): its description is 1620 characters: OpenAI refuses tool descriptions over 1024 on some models`,
        expect.stringMatching(new RegExp(`^${module.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: tools\\[1\\] \\("wide_parameters"\\): its description and parameters are \\d+ KiB of JSON, sent with every model request that offers the tool$`)),
      ],
    });
  });

  it('a plugin\'s own error text cannot drive the operator\'s terminal', async () => {
    const checked = await airlock(['check', join(BROKEN, 'escape-in-error')]);
    expect(checked.code).toBe(1);
    expect(checked.stdout).toContain('could not be loaded: \\x1b[2J\\x1b]0;pwned\\x07 all clear');
    expect(checked.stdout).not.toContain('\u001b');
    const ran = await airlock(['run', '-', '--plugins', join(BROKEN, 'escape-in-error')], { input: '{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"x","arguments":"{}"}}]}' });
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain('\\x1b[2J\\x1b]0;pwned\\x07 all clear');
    expect(ran.stderr).not.toContain('\u001b');
  });
});
