// The CLI's standard capabilities: the demo's write_file writes into the workspace folder it
// names, --kv persists, and bad values of either flag are one-line usage errors.
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { airlock, oneLine } from './support/run-cli.js';

let base: string;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'airlock-cli-caps-'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('--workspace and --kv', () => {
  it('the bundled example writes for real into the workspace, says where, and /etc/hosts stays denied', async () => {
    const workspace = join(base, 'ws');
    const { code, stdout, stderr } = await airlock(['run', 'examples/transcript.json', '--plugins', 'examples/plugins', '--workspace', workspace, '--tenant', 'acme', '--json']);
    expect(code).toBe(0);
    const results = JSON.parse(stdout).results as { callId: string; isError: boolean; error?: { code: string } }[];
    expect(results.find((result) => result.callId === 'call_save')).toMatchObject({ isError: false });
    expect(results.find((result) => result.callId === 'call_hosts')).toMatchObject({ isError: true, error: { code: 'PERMISSION_DENIED' } });
    expect(await readFile(join(workspace, 'acme', 'notes', 'release-0.1.md'), 'utf8')).toBe('# Airlock 0.1\n\nSandboxed plugins.');
    expect(stderr).toContain(`airlock: workspace files are in ${join(workspace, 'acme')}`);
  });

  it('the default workspace is private to this user: its folder 0700, files 0600, and a folder someone else could write is refused', async () => {
    const temp = join(base, 'tmp');
    await mkdir(temp);
    const env = { env: { TMPDIR: temp } };
    const { code, stderr } = await airlock(['run', 'examples/transcript.json', '--plugins', 'examples/plugins', '--tenant', 'acme', '--json'], env);
    expect(code).toBe(0);
    const where = /workspace files are in (\S+)/.exec(stderr)![1]!;
    expect(where.startsWith(temp)).toBe(true);
    const mode = async (path: string) => (await stat(path)).mode & 0o777;
    expect(await mode(join(where, '..', '..'))).toBe(0o700);
    expect(await mode(where)).toBe(0o700);
    expect(await mode(join(where, 'notes'))).toBe(0o700);
    expect(await mode(join(where, 'notes', 'release-0.1.md'))).toBe(0o600);
    // Made by someone else, writable by others: not used.
    await chmod(join(where, '..', '..'), 0o777);
    const refused = await airlock(['run', 'examples/transcript.json', '--plugins', 'examples/plugins', '--json'], env);
    expect(refused.code).toBe(2);
    expect(oneLine(refused.stderr)).toContain("(the default workspace's folder) is not a private folder of this user's; remove it or pass --workspace <dir>");
  });

  it('checks a plugin granted kv only when --kv offers it', async () => {
    const plugin = join(base, 'kv-plugin');
    await mkdir(plugin);
    await writeFile(join(plugin, 'index.js'), "export default { tools: [{ name: 'remember', description: 'r', parameters: { type: 'object' }, execute: (_a, ctx) => ctx.capabilities['kv.set']({ key: 'k', value: 1 }) }] };");
    await writeFile(join(plugin, 'airlock.plugin.json'), JSON.stringify({ name: 'mem', module: './index.js', capabilities: ['kv'], kv: { maxBytes: 1000 } }));
    const without = await airlock(['check', plugin]);
    expect(without.code).toBe(1);
    expect(without.stdout).toContain('capabilities.0 names "kv", which this host does not offer');
    const withKv = await airlock(['check', plugin, '--kv', join(base, 'state.sqlite')]);
    expect(withKv.code).toBe(0);
  });

  it.each([
    [['--workspace', ''], '--workspace must name a folder'],
    [['--workspace', 'package.json'], '--workspace package.json: not a folder'],
    [['--kv', ''], '--kv must name a file'],
    [['--kv', 'examples'], '--kv examples: not a file'],
    [['--allow-net', 'https://example.com/path'], '--allow-net must be an origin'],
    [['--secret', 'T=plain'], '--secret T=plain: must be NAME=env:VARIABLE'],
    [['--secret', 'T=env:AIRLOCK_UNSET_VARIABLE', '--allow-net', 'https://example.com'], '--secret T: environment variable AIRLOCK_UNSET_VARIABLE is not set'],
    [['--allow-internal', 'db.internal'], '--allow-internal needs --allow-net'],
    [['--allow-internal', 'http://db.internal', '--allow-net', 'http://db.internal'], '--allow-internal must be a host name'],
    [['--secret', 'T=env:HOME@https://example.com/path', '--allow-net', 'https://example.com'], '--secret T must be an origin'],
    [['--secret', 'T=env:HOME', '--secret', 'T=env:PATH', '--allow-net', 'https://example.com'], '--secret T: given twice'],
  ])('%j is exit 2 with one line', async (flags, message) => {
    const { code, stderr } = await airlock(['run', 'examples/transcript.json', '--plugins', 'examples/plugins', ...flags]);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toContain(message);
  });

  describe('--allow-net and --secret', () => {
    let requests = 0;
    let server: Server;
    let origin: string;
    let plugin: string;
    let transcript: string;
    beforeAll(async () => {
      server = createServer((req, res) => {
        requests += 1;
        res.end(JSON.stringify({ authorization: req.headers.authorization ?? null }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      plugin = join(base, 'fetcher');
      await mkdir(plugin);
      await writeFile(join(plugin, 'index.js'), "export default { tools: [{ name: 'get', description: 'g', parameters: { type: 'object', properties: { url: { type: 'string' } } }, execute: ({ url }, ctx) => ctx.capabilities.fetch({ url }) }] };");
      await writeFile(join(plugin, 'airlock.plugin.json'), JSON.stringify({ name: 'fetcher', module: './index.js', capabilities: ['fetch'], network: { allow: [origin] }, secrets: { TOKEN: { origins: [origin], header: 'Authorization', format: 'Bearer {secret}' } } }));
      transcript = join(base, 'get.json');
      await writeFile(transcript, JSON.stringify({ role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get', arguments: JSON.stringify({ url: `${origin}/` }) } }] }));
    });
    afterAll(() => {
      server.close();
    });

    it('--allow-net offers fetch to that origin, and --secret adds a secret from the environment the plugin never sees', async () => {
      const { code, stdout } = await airlock(['run', transcript, '--plugins', plugin, '--allow-net', origin, '--secret', 'TOKEN=env:AIRLOCK_TEST_TOKEN', '--json'], { env: { AIRLOCK_TEST_TOKEN: 'tok-123456' } });
      expect(code).toBe(0);
      expect(JSON.parse(stdout).results[0]).toMatchObject({ isError: false, value: { status: 200, body: '{"authorization":"Bearer [REDACTED]"}' } });
      expect(stdout).not.toContain('tok-123456');
    });

    it('--secret NAME=env:VAR@origin binds the secret: a manifest sending it elsewhere does not load', async () => {
      const env = { env: { AIRLOCK_TEST_TOKEN: 'tok-123456' } };
      const bound = await airlock(['run', transcript, '--plugins', plugin, '--allow-net', origin, '--secret', `TOKEN=env:AIRLOCK_TEST_TOKEN@${origin}`, '--json'], env);
      expect(bound.code).toBe(0);
      expect(JSON.parse(bound.stdout).results[0]).toMatchObject({ isError: false, value: { body: '{"authorization":"Bearer [REDACTED]"}' } });
      const sent = requests;
      const elsewhere = await airlock(['run', transcript, '--plugins', plugin, '--allow-net', origin, '--secret', 'TOKEN=env:AIRLOCK_TEST_TOKEN@https://api.example.com,https://*.example.org', '--json'], env);
      expect(elsewhere.code).not.toBe(0);
      expect(oneLine(elsewhere.stderr)).toContain(`secrets.TOKEN.origins.0 (${origin}) is outside the origins the host binds this secret to (https://api.example.com, https://*.example.org)`);
      expect(requests).toBe(sent);
    });

    it('an origin --allow-net does not name is refused in the plugin', async () => {
      const refused = await airlock(['run', transcript, '--plugins', plugin, '--allow-net', 'https://example.com', '--json']);
      expect(JSON.parse(refused.stdout).results[0]).toMatchObject({ isError: true, error: { code: 'TOOL_ERROR' } });
    });

    it('without --secret for a secret the manifest names: a warning at check and at start, and the request refused, never sent bare', async () => {
      const warning = 'secrets.TOKEN: this host supplies no value for it, so fetch refuses requests to its origins (give it with --secret TOKEN=env:VARIABLE)';
      const check = await airlock(['check', plugin, '--allow-net', origin]);
      expect(check.code).toBe(0);
      expect(check.stdout).toContain(warning);
      const sent = requests;
      const bare = await airlock(['run', transcript, '--plugins', plugin, '--allow-net', origin, '--json']);
      expect(bare.code).toBe(0);
      expect(bare.stderr).toContain(`airlock: warning: ${join(plugin, 'airlock.plugin.json')}: ${warning}`);
      expect(JSON.parse(bare.stdout).results[0]).toMatchObject({ isError: true, error: { code: 'TOOL_ERROR', message: expect.stringContaining('capability fetch failed') } });
      expect(requests).toBe(sent);
    });
  });

  it('--help names the flags', async () => {
    const { stdout } = await airlock(['run', '--help']);
    for (const flag of ['--workspace <dir>', '--kv <file>', '--allow-net <origin>', '--secret NAME=env:VAR']) expect(stdout).toContain(flag);
  });
});
