// The progress lines at a terminal make way for approval questions: pauses nest, so a
// question answered never lets the lines redraw over the next question on the screen.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createProgress } from '../src/support/progress.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('progress lines', () => {
  it('stay hidden until every pause has its resume', () => {
    vi.useFakeTimers();
    const written: string[] = [];
    const stream = { columns: 80, write: (text: string) => (written.push(text), true) } as unknown as NodeJS.WriteStream;
    const progress = createProgress(stream, (_style, text) => text, () => 0);
    progress.started('call_a', 'delete_file');
    progress.started('call_b', 'delete_file');
    vi.advanceTimersByTime(250);
    expect(written.join('')).toContain('call_a');
    // Two questions at once: the first answered, the second still on the screen.
    progress.pause();
    progress.pause();
    progress.resume();
    written.length = 0;
    vi.advanceTimersByTime(1000);
    expect(written).toEqual([]);
    progress.resume();
    vi.advanceTimersByTime(250);
    expect(written.join('')).toContain('call_b');
  });

  it('a line of wide characters fits the terminal\'s columns, so the redraw erases all of it', () => {
    vi.useFakeTimers();
    const written: string[] = [];
    const stream = { columns: 40, write: (text: string) => (written.push(text), true) } as unknown as NodeJS.WriteStream;
    const progress = createProgress(stream, (_style, text) => text, () => 0);
    progress.started('呼'.repeat(60), 'spin');
    vi.advanceTimersByTime(150);
    const line = written.join('').split('\n')[0]!;
    const columns = Array.from(line).reduce((sum, character) => sum + (/\p{Script=Han}/u.test(character) ? 2 : 1), 0);
    expect(line).toContain('呼');
    expect(columns).toBeLessThanOrEqual(39);
    progress.stop();
  });
});
