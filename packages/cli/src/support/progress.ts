// While calls run at a terminal: one line per running call with its elapsed time, on
// stderr, redrawn in place and erased before anything else is written. Never used when
// stderr is not a terminal, so piped output and logs stay clean.
import { fitColumns } from './terminal-text.js';
import type { Style } from './style.js';

export interface Progress {
  /** A call entered the pipeline (its first stage). */
  started(callId: string, name: string): void;
  /** A call has its result. */
  finished(callId: string): void;
  /**
   * Erases the lines and stops drawing (an approval prompt is about to be shown). Pauses
   * nest: drawing starts again only once every pause has its resume, so one question
   * answered never redraws over the next one waiting on the screen.
   */
  pause(): void;
  resume(): void;
  /** Erases the lines for good. */
  stop(): void;
}

const REDRAW_MS = 100;
const MAX_LINES = 8;
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** Escaped like every other line the CLI prints, and cut to fit the columns it may take. */
function printable(text: string, columns: number): string {
  return fitColumns(text, columns);
}

function elapsed(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

export function createProgress(stream: NodeJS.WriteStream, style: (style: Style, text: string) => string, now: () => number = () => performance.now()): Progress {
  // Names and ids come from the model's message: escaped, so no sequence of theirs reaches the terminal.
  const running = new Map<string, { name: string; since: number }>();
  let drawn = 0;
  let frame = 0;
  let pauses = 0;
  let stopped = false;
  let timer: ReturnType<typeof setInterval> | undefined;

  const erase = (): void => {
    // Up to the first drawn line, then clear to the end of the screen.
    if (drawn > 0) stream.write(`\u001b[${drawn}A\u001b[J`);
    drawn = 0;
  };

  const draw = (): void => {
    erase();
    if (pauses > 0 || stopped || running.size === 0) return;
    // A pty without a size reports 0 columns.
    const width = Math.max(20, (stream.columns > 0 ? stream.columns : 80) - 1);
    const at = now();
    const lines = [...running.entries()].slice(0, MAX_LINES).map(([callId, call]) => {
      const text = `${FRAMES[frame % FRAMES.length]} ${printable(call.name, 64)} · ${printable(callId, 64)}  ${elapsed(at - call.since)}`;
      return style('dim', printable(text, width));
    });
    if (running.size > MAX_LINES) lines.push(style('dim', `  and ${running.size - MAX_LINES} more running`));
    frame += 1;
    stream.write(`${lines.join('\n')}\n`);
    drawn = lines.length;
  };

  const schedule = (): void => {
    if (timer === undefined && !stopped && pauses === 0 && running.size > 0) {
      timer = setInterval(draw, REDRAW_MS);
      // Progress alone never keeps the process alive.
      timer.unref();
    }
    if (timer !== undefined && (stopped || pauses > 0 || running.size === 0)) {
      clearInterval(timer);
      timer = undefined;
      erase();
    }
  };

  return {
    started(callId, name) {
      if (!running.has(callId)) running.set(callId, { name, since: now() });
      schedule();
    },
    finished(callId) {
      running.delete(callId);
      schedule();
    },
    pause() {
      pauses += 1;
      schedule();
      erase();
    },
    resume() {
      pauses = Math.max(0, pauses - 1);
      schedule();
    },
    stop() {
      stopped = true;
      schedule();
      erase();
    },
  };
}
