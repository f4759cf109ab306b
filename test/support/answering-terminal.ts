// The CLI at a real terminal (a pty from `script`), answered as a person answers: each
// answer is typed once its question is on the screen (a line typed before its question
// answers nothing), then input ends. Resolves with everything the screen showed.
import { spawn } from 'node:child_process';
import { BIN, ROOT } from './run-cli.js';

/** The end of an approval question: `? [y/N] ` or, with arguments hidden, `? [y/N/v] `. */
const QUESTION = /\? \[y\/N(?:\/v)?\] /g;

export function answeringAtTerminal(args: string, answers: readonly string[], options: { columns?: number; env?: Record<string, string> } = {}): Promise<string> {
  const env: Record<string, string | undefined> = { ...process.env, TERM: 'xterm-256color', COLUMNS: String(options.columns ?? 80), NO_COLOR: '1', ...options.env };
  const command = `stty cols ${options.columns ?? 80} 2>/dev/null; ${process.execPath} ${BIN} ${args}`;
  const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'ignore'] });
  // The program may end before input does (it ends at the last question): a broken pipe then is no failure.
  child.stdin.on('error', () => undefined);
  const pending = [...answers];
  let screen = '';
  let asked = 0;
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    screen += chunk;
    const questions = screen.match(QUESTION)?.length ?? 0;
    while (asked < questions) {
      asked += 1;
      const answer = pending.shift();
      if (answer !== undefined) child.stdin.write(`${answer}\n`);
      if (pending.length === 0) child.stdin.end();
    }
  });
  if (pending.length === 0) child.stdin.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) => child.on('close', () => {
    clearTimeout(timer);
    resolve(screen);
  }));
}
