// The person at the terminal is the last line of defence: through a real pty (`script`),
// nothing a model or plugin writes can drive the terminal, and the approval prompt shows
// what will run (or says plainly what it hides, and shows it on request).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { answeringAtTerminal } from './support/answering-terminal.js';
import { BIN, ROOT } from './support/run-cli.js';

const hasScript = existsSync('/usr/bin/script');
const G = 'test/fixtures/gate';

function atTerminal(args: string, options: { input?: string; color?: boolean; columns?: number } = {}): string {
  const env: Record<string, string | undefined> = { ...process.env, TERM: 'xterm-256color', COLUMNS: String(options.columns ?? 80) };
  if (options.color === true) delete env.NO_COLOR;
  else env.NO_COLOR = '1';
  const command = `stty cols ${options.columns ?? 80} 2>/dev/null; ${process.execPath} ${BIN} ${args}`;
  const result = spawnSync('script', ['-qec', command, '/dev/null'], { cwd: ROOT, env, input: options.input ?? '', encoding: 'utf8', timeout: 60_000 });
  return result.stdout;
}

// Anything a terminal acts on or hides: C0 (but the pty's own CR LF), DEL, C1, bidi and
// other format characters, line and paragraph separators.
const RAW_CONTROL = /(?!\n)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;
const screenText = (screen: string): string => screen.replace(/\r\n/g, '\n');
// With colour on, our SGR codes are the only escape sequences allowed.
const withoutOwnColour = (screen: string): string => screen.replace(new RegExp(`${String.fromCharCode(27)}\\[(?:31|32|36|39|2|22|1)m`, 'g'), '');

describe.skipIf(!hasScript)('hostile text at a terminal', () => {
  const run = `run ${G}/transcripts/hostile.json --plugins ${G}/plugins`;

  it.each([false, true])('cards escape names, arguments, results and plugin errors (colour: %s)', (color) => {
    const screen = screenText(atTerminal(run, { color }));
    expect(withoutOwnColour(screen)).not.toMatch(RAW_CONTROL);
    const plain = withoutOwnColour(screen);
    // The denied write shows as denied, its argument's CR and CSI as visible escapes.
    expect(plain).toContain('write_file  ✗ PERMISSION_DENIED');
    // An argument holding escaped characters is shown as JSON, so an escape and a real control read apart.
    expect(plain).toContain('content: "x\\r\\u001b[2K"');
    // An unknown tool named with a clear-screen sequence and a bidi override.
    expect(plain).toContain('\\x1b[2J\\x1b[Hls\\u202e  ✗ UNKNOWN_TOOL');
    // A plugin error trying clear screen, CR + forged outcome, OSC 0 title, OSC 8 link with ST,
    // 8-bit CSI, RLO, NEL (its closing LS is trimmed with the message's other outer whitespace).
    expect(plain).toContain('crash: \\x1b[2J\\x1b[H\\r\\x1b[2K✓ ok\\n2 calls: 2 succeeded, 0 failed\\x1b]0;owned\\x07\\x1b]8;;https://evil.example\\x1b\\click\\x1b]8;;\\x1b\\\\x9b31m\\u202edenied\\x85\n');
    // The only summary is the real one, on a line of its own.
    expect(plain.split('\n').filter((line) => /^\d+ calls?:/.test(line))).toEqual(['13 calls: 5 succeeded, 8 failed']);
  });

  it('error lines are escaped too', () => {
    const screen = screenText(atTerminal(`run ${G}/transcripts/hostile.json --plugins ${G}/hostile-check`));
    expect(screen).not.toMatch(RAW_CONTROL);
    expect(screen).toContain('airlock: ');
    expect(screen).toContain('\\x1b]0;owned\\x07');
  });

  it('airlock check prints a hostile tool name as visible escapes', () => {
    const screen = screenText(atTerminal(`check ${G}/hostile-check`, { color: true }));
    expect(withoutOwnColour(screen)).not.toMatch(RAW_CONTROL);
    expect(screen).toContain('\\x1b]0;owned\\x07\\x1b[2J\\x9b2J\\u202e');
  });
});

describe.skipIf(!hasScript)('the approval prompt at a terminal', () => {
  it.each([['y', '✓ ok'], ['n', '✗ PERMISSION_DENIED']])('shows the whole of a long path, its tail included, before "%s" gives %s', async (answer, outcome) => {
    const screen = screenText(await answeringAtTerminal(`run ${G}/transcripts/long-path.json --plugins ${G}/plugins`, [answer], { columns: 60 }));
    const prompt = screen.slice(screen.indexOf('Approval needed'), screen.indexOf('Allow publish_file?'));
    expect(prompt).toContain('Arguments of publish_file (all shown):');
    const shown = prompt.split('\n').slice(2).map((line) => line.trim()).join('');
    expect(shown).toContain(`path: "notes/${'a'.repeat(300)}/../../root/.ssh/authorized_keys"`);
    expect(shown).toContain('content: "ssh-ed25519 AAAA attacker"');
    expect(Math.max(...prompt.split('\n').slice(1).map((line) => Array.from(line).length))).toBeLessThanOrEqual(60);
    expect(screen).toContain(`publish_file  ${outcome}`);
  });

  it('says what it hides; "v" shows everything, then the question is asked again', async () => {
    const screen = screenText(await answeringAtTerminal(`run ${G}/transcripts/huge-args.json --plugins ${G}/plugins`, ['v', 'y'], { columns: 100 }));
    const first = screen.slice(0, screen.indexOf('All arguments of publish_file:'));
    expect(first).toContain('NOT ALL SHOWN: 8421 characters hidden; answer v to see everything');
    expect(first).toContain('path: "notes/a.md"');
    expect(first).not.toContain('MIDDLE_OF_THE_VALUE');
    expect(first).toContain('Allow publish_file? [y/N/v]');
    const all = screen.slice(screen.indexOf('All arguments of publish_file:'));
    expect(all.split('\n').map((line) => line.trim()).join('')).toContain(`${'x'.repeat(40)}MIDDLE_OF_THE_VALUE${'y'.repeat(40)}`);
    expect(all).toContain('Allow publish_file? [y/N]');
    expect(screen).toContain('publish_file  ✓ ok');
  });

  it('anything but yes after viewing is a no', async () => {
    const screen = screenText(await answeringAtTerminal(`run ${G}/transcripts/huge-args.json --plugins ${G}/plugins`, ['v', 'v'], { columns: 100 }));
    expect(screen).toContain('publish_file  ✗ PERMISSION_DENIED');
  });

  it('a line typed before its question answers nothing: the rest of a paste cannot approve the next call', async () => {
    // "y" twice at the first question (a paste, a double Enter): the second line was typed
    // before the second question was on the screen, so that question gets no answer, and no is the default.
    const screen = screenText(await answeringAtTerminal(`run ${G}/transcripts/two-asks.json --plugins ${G}/plugins`, ['y\ny'], { columns: 100 }));
    expect(screen.match(/\? \[y\/N\] /g)).toHaveLength(2);
    expect(screen).toMatch(/publish_file {2}✓ ok .*· first/);
    expect(screen).toMatch(/publish_file {2}✗ PERMISSION_DENIED .*· second/);
  });

  it('Ctrl-C at the question cancels the call, exit 130, and its card starts a line of its own', async () => {
    const command = `stty cols 80 2>/dev/null; ${process.execPath} ${BIN} run ${G}/transcripts/long-path.json --plugins ${G}/plugins`;
    const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', TERM: 'xterm-256color' }, stdio: ['pipe', 'pipe', 'ignore'] });
    let screen = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      screen += chunk;
      // Typed once the question is on the screen: the terminal turns it into SIGINT.
      if (screen.includes('[y/N] ') && !child.stdin.writableEnded) child.stdin.end('\x03');
    });
    expect(await new Promise((resolve) => child.on('close', resolve))).toBe(130);
    expect(screenText(screen)).toMatch(/Allow publish_file\? \[y\/N\] (\^C)?\npublish_file {2}✗ ABORTED_BEFORE_DISPATCH/);
  });

  it('lines typed before the first question are dropped too', () => {
    const screen = screenText(atTerminal(`run ${G}/transcripts/long-path.json --plugins ${G}/plugins`, { input: 'y\n', columns: 60 }));
    expect(screen).toContain('Allow publish_file?');
    expect(screen).toContain('publish_file  ✗ PERMISSION_DENIED');
  });
});
