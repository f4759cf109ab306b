// The packages as a platform gets them: pack the three workspace packages, install the
// tarballs with npm into an empty project, run the installed `airlock run` (the bundled
// example) and type-check and run examples/embed against the installed packages.
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './support/run-cli.js';

const run = promisify(execFile);
const PACKAGES = ['core', 'sandbox', 'cli'] as const;
/** The isolated-vm npm should pick for this Node (the engines of each release). */
const EXPECTED_ISOLATED_VM = Number(process.versions.node.split('.')[0]) >= 24 ? '7.0.1' : Number(process.versions.node.split('.')[0]) >= 22 ? '6.2.0' : '5.0.4';

// npm, npx and the programs run on the Node running this test (CI runs it on 20 and on 26).
const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`, NO_COLOR: '1', npm_config_update_notifier: 'false' };
let project = '';
let tarballs: string[] = [];

async function sh(command: string, args: string[], cwd: string, extraEnv: Record<string, string> = {}): Promise<{ stdout: string; stderr: string }> {
  return run(command, args, { cwd, env: { ...env, ...extraEnv }, maxBuffer: 16 * 1024 * 1024, timeout: 240_000 });
}

/**
 * Node 20's isolated-vm (5.0.4) ships no binary: its install script compiles for minutes.
 * The workspace compiled that very release for this very Node on `pnpm install`, so the
 * test installs without scripts and puts that build in place. On 22+ the tarball's prebuilt
 * binaries load as they are.
 */
async function reuseWorkspaceBuild(): Promise<void> {
  const installed = join(project, 'node_modules/isolated-vm');
  if (existsSync(join(installed, 'prebuilds'))) return;
  const fromSandbox = createRequire(join(ROOT, 'packages/sandbox/package.json'));
  const workspaceBuild = dirname(fromSandbox.resolve('isolated-vm-node20/package.json'));
  await cp(join(workspaceBuild, 'out'), join(installed, 'out'), { recursive: true });
}

beforeAll(async () => {
  for (const name of PACKAGES) {
    if (!existsSync(join(ROOT, 'packages', name, 'dist/index.js'))) throw new Error(`packages/${name} is not built: run "pnpm build" first`);
  }
  project = await mkdtemp(join(tmpdir(), 'airlock-pack-'));
  const packs = join(project, 'packs');
  // The suite's build step has just built dist; prepack ("npm run build") would rebuild it
  // under the test files running beside this one, so packing skips scripts here.
  for (const name of PACKAGES) {
    await sh('npx', ['--yes', 'pnpm@10', 'pack', '--pack-destination', packs], join(ROOT, 'packages', name), { npm_config_ignore_scripts: 'true' });
  }
  tarballs = (await readdir(packs)).map((file) => join(packs, file));
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'embedder', private: true, type: 'module' }));
  await sh('npm', ['install', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs], project);
  await reuseWorkspaceBuild();
}, 300_000);

afterAll(async () => {
  if (project) await rm(project, { recursive: true, force: true });
});

describe('the packed packages, installed with npm', () => {
  it('each tarball carries its LICENSE, README, built entry points and declarations, and no workspace: ranges', async () => {
    expect(tarballs).toHaveLength(3);
    for (const name of PACKAGES) {
      const dir = join(project, 'node_modules/@airlock', name);
      const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
      expect(existsSync(join(dir, 'LICENSE')), `${name} LICENSE`).toBe(true);
      expect(existsSync(join(dir, 'README.md')), `${name} README.md`).toBe(true);
      expect(existsSync(join(dir, 'dist/index.js')), `${name} dist/index.js`).toBe(true);
      expect(existsSync(join(dir, 'dist/index.d.ts')), `${name} dist/index.d.ts`).toBe(true);
      expect(manifest.engines).toEqual({ node: expect.stringMatching(/^>=20/) });
      expect(JSON.stringify(manifest)).not.toContain('workspace:');
    }
  });

  it('npm picked the isolated-vm release this Node runs', async () => {
    const manifest = JSON.parse(await readFile(join(project, 'node_modules/isolated-vm/package.json'), 'utf8')) as { version: string };
    expect(manifest.version).toBe(EXPECTED_ISOLATED_VM);
  });

  it('npx airlock run runs the bundled example from the installed CLI', async () => {
    // --no-install: a public npm package is also called "airlock"; only the installed bin may run.
    const { stdout } = await sh('npx', ['--no-install', 'airlock', 'run', '--json'], project);
    const { results } = JSON.parse(stdout) as { results: { name: string; isError: boolean; error?: { code: string } }[] };
    expect(results.map((result) => (result.isError ? result.error?.code : 'ok'))).toEqual(['ok', 'ok', 'ok', 'PERMISSION_DENIED', 'INVALID_ARGS', 'CPU_LIMIT']);
  });

  it('npx airlock run --code-mode runs the bundled Code Mode example (sucrase installed with the sandbox)', async () => {
    const { stdout } = await sh('npx', ['--no-install', 'airlock', 'run', '--code-mode', '--json'], project);
    const { results } = JSON.parse(stdout) as { results: { name: string; isError: boolean; value?: { result: { saved: string } } }[] };
    expect(results).toEqual([expect.objectContaining({ name: 'run_code', isError: false, value: expect.objectContaining({ result: expect.objectContaining({ saved: 'notes/airlock-0-1-release-notes.md' }) }) })]);
  });

  it('examples/embed type-checks and runs against the installed packages', async () => {
    const embed = join(project, 'embed');
    await mkdir(embed);
    await cp(join(ROOT, 'examples/embed/src'), join(embed, 'src'), { recursive: true });
    await cp(join(ROOT, 'examples/embed/tsconfig.json'), join(embed, 'tsconfig.json'));
    await cp(join(ROOT, 'examples/plugins'), join(project, 'plugins'), { recursive: true });
    // The workspace's TypeScript and Node types; every other import resolves in the project.
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    await sh(process.execPath, [tsc, '-p', 'tsconfig.json', '--typeRoots', join(ROOT, 'node_modules/@types')], embed);
    const { stdout } = await sh(process.execPath, ['dist/embed.js'], embed);
    expect(stdout).toContain('slugify: ok "airlock-0-1-release-notes"');
    expect(stdout).toContain('write_file: PERMISSION_DENIED');
    expect(stdout).toContain('delete_file: ok');
  });
});
