// The gate end to end, through the built binary: manifest rules hit exactly the tools they
// name, `airlock check` catches a rule that names no tool, path rules hold against control
// characters and `..`, repeated call ids are refused, and approval time is reported apart.
import { describe, expect, it } from 'vitest';
import { airlock, oneLine } from './support/run-cli.js';

const G = 'test/fixtures/gate';
const RAW_CONTROL = /(?!\n)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

interface Report {
  results: { callId: string; name: string; isError: boolean; error?: { code: string; message: string }; durationMs: number; approvalMs?: number }[];
}

describe('manifest rules and airlock check', () => {
  it('a rule pattern that matches no tool of its plugin is a problem (exit 1), each list entry on its own', async () => {
    const { code, stdout } = await airlock(['check', `${G}/rule-mistakes`]);
    expect(code).toBe(1);
    expect(stdout).toContain('permissions.rules.0.tool "btea" matches no tool of this plugin (its tools: alpha, beta, gamma, delta)');
    expect(stdout).toContain('permissions.rules.1.tool "gama" matches no tool of this plugin');
    expect(stdout).not.toContain('permissions.rules.2');
    expect(stdout).toContain('permissions.rules.0.when.pth names no argument declared by write_file, so the rule can never apply');
    expect(stdout).toContain('problems found');
  });

  it('such a plugin does not load for run either (exit 2, one line)', async () => {
    const { code, stderr } = await airlock(['run', `${G}/transcripts/hostile.json`, '--plugins', `${G}/rule-mistakes/typo`]);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toContain('"btea" matches no tool of this plugin');
  });

  it('rules that name their tools pass check', async () => {
    const { code, stdout } = await airlock(['check', `${G}/plugins`]);
    expect(code).toBe(0);
    expect(stdout).toContain('3 plugins ok');
  });
});

describe('a hostile turn through the gate', () => {
  it('each call gets exactly the outcome its rule says', async () => {
    const { code, stdout } = await airlock(['run', `${G}/transcripts/hostile.json`, '--plugins', `${G}/plugins`, '--json']);
    expect(code).toBe(0);
    expect(stdout).not.toMatch(RAW_CONTROL);
    const { results } = JSON.parse(stdout) as Report;
    const outcome = results.map((result) => `${result.callId} ${result.name.slice(0, 10)} ${result.error?.code ?? 'ok'}`);
    expect(outcome).toEqual([
      'hosts write_file PERMISSION_DENIED',
      'cron write_file PERMISSION_DENIED',
      'nel write_file PERMISSION_DENIED',
      'climb write_file PERMISSION_DENIED',
      'ok write_file ok',
      'ghost \u001b[2J\u001b[Hls\u202e UNKNOWN_TOOL',
      'shout shout ok',
      'crash crash TOOL_ERROR',
      'shout shout INVALID_ARGS',
      'a alpha ok',
      'b beta PERMISSION_DENIED',
      'g gamma ok',
      'd delta ok',
    ]);
    expect(results[1]!.error!.message).toContain('argument "path" contains a control character (\\n at 15)');
    expect(results[2]!.error!.message).toContain('argument "path" contains a control character (\\x85 at 10)');
    expect(results[3]!.error!.message).toContain('climbs');
    expect(results[8]!.error!.message).toContain('call id "shout" is already used by an earlier call in this turn');
    for (const result of results) expect(result).not.toHaveProperty('approvalMs');
  });

  it('a path that climbs out of the rule\'s root is refused by name', async () => {
    const transcript = JSON.stringify([{ role: 'assistant', content: null, tool_calls: [
      { id: 'p1', type: 'function', function: { name: 'publish_file', arguments: JSON.stringify({ path: 'notes/../../../../etc/hosts' }) } },
      { id: 'p2', type: 'function', function: { name: 'publish_file', arguments: JSON.stringify({ path: 'notes/../secrets/key' }) } },
      { id: 'p3', type: 'function', function: { name: 'publish_file', arguments: JSON.stringify({ path: 'notes/ok.md' }) } },
    ] }]);
    const { stdout } = await airlock(['run', '-', '--plugins', `${G}/plugins`, '--approve', 'publish_file', '--json'], { input: transcript });
    const { results } = JSON.parse(stdout) as Report;
    expect(results[0]!.error).toEqual({ code: 'PERMISSION_DENIED', message: expect.stringContaining('climbs out of its root /srv/workspace') });
    expect(results[1]!.error).toEqual({ code: 'PERMISSION_DENIED', message: 'publish_file: denied (system files and workspace secrets are off limits)' });
    expect(results[2]!.isError).toBe(false);
    // Asked (and answered on the command line): the wait is reported apart from the call's own time.
    expect(results[2]!.approvalMs).toEqual(expect.any(Number));
    expect(results[2]!.durationMs).toEqual(expect.any(Number));
  });

  it('schemas and messages keep hostile plugin text as JSON escapes', async () => {
    const { code, stdout } = await airlock(['schemas', '--plugins', `${G}/plugins/noisy`, '--format', 'openai']);
    expect(code).toBe(0);
    expect(stdout).not.toMatch(RAW_CONTROL);
    expect(JSON.stringify(JSON.parse(stdout))).toContain('says things\\u001b[31m');
  });
});
