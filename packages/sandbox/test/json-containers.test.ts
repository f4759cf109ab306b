import { describe, expect, it } from 'vitest';
import { holdsMoreContainers } from '../src/isolate/json-containers.js';

describe('holdsMoreContainers: the host\'s count of a result\'s objects and arrays', () => {
  it('counts every object and array, nested or not', () => {
    expect(holdsMoreContainers(JSON.stringify(new Array(9).fill({})), 10)).toBe(false); // 9 + the array
    expect(holdsMoreContainers(JSON.stringify(new Array(10).fill({})), 10)).toBe(true);
    expect(holdsMoreContainers('[[[[[[[[[[[]]]]]]]]]]]', 10)).toBe(true);
  });

  it('does not count braces inside strings, escaped quotes included', () => {
    const text = JSON.stringify(['{['.repeat(50), 'a "quoted" {', '\\', '[{']);
    expect(holdsMoreContainers(text, 1)).toBe(false);
    expect(holdsMoreContainers(JSON.stringify(['\\', {}]), 1)).toBe(true);
  });
});
