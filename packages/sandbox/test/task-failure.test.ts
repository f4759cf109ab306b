// What the host says of a plugin that failed to load, or of a task its sandbox lost: the
// message up to its stack frames, bounded, and read in linear time whatever the plugin threw.
import { describe, expect, it } from 'vitest';
import { withoutStack } from '../src/isolate/task-failure.js';

describe('withoutStack', () => {
  it('keeps the message up to its frames, within the bound', () => {
    expect(withoutStack('SyntaxError: Unexpected token ;\n    at evaluate (plugin.js:3:87)\n    at run', 500)).toBe('SyntaxError: Unexpected token ;');
    expect(withoutStack('no frames here', 500)).toBe('no frames here');
    expect(withoutStack('x'.repeat(900), 500)).toHaveLength(500);
  });

  it('reads a message of a million spaces in linear time', () => {
    // /\s+at .*$/ backtracked over it for seconds; a quadratic reading of 4 million characters is hours.
    expect(withoutStack(`boom${' '.repeat(4_000_000)}x`, 500)).toBe('boom');
    expect(withoutStack(`${' '.repeat(4_000_000)}at f (x.js:1:1)`, 200)).toBe('');
  });
});
