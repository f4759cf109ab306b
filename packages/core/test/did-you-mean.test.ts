// "Did you mean": offered for a slip, never for a guess.
import { describe, expect, it } from 'vitest';
import { closestName, didYouMean } from '../src/index.js';

describe('closestName', () => {
  it.each([
    ['defualt', ['default', 'tools', 'rules'], 'default'],
    ['limit', ['limits', 'name', 'module'], 'limits'],
    ['--plugns', ['--plugins', '--json', '--format'], '--plugins'],
    ['CpuMs', ['cpuMs', 'memoryMb'], 'cpuMs'],
    ['x', ['limits', 'name'], undefined],
    ['colour', ['name', 'module', 'limits'], undefined],
    ['anything', [], undefined],
    // Two letters swapped is one slip, even in a short name.
    ['ehco', ['echo', 'slugify'], 'echo'],
    ['rnu', ['run', 'check', 'serve'], 'run'],
  ])('%s → %s', (typed, known, expected) => {
    expect(closestName(typed, known)).toBe(expected);
  });

  it('formats the hint, or nothing', () => {
    expect(didYouMean('chek', ['check', 'run'])).toBe(' (did you mean "check"?)');
    expect(didYouMean('zzz', ['check', 'run'])).toBe('');
  });
});
