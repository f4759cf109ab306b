// A manifest must read as it runs: a key given twice in one object is found wherever it is,
// and nothing else is taken for one (keys in other objects, strings that look like keys).
import { describe, expect, it } from 'vitest';
import { repeatedKeys } from '../src/manifest/repeated-keys.js';

describe('repeatedKeys', () => {
  it('finds a key given twice in one object, at any depth, by its path', () => {
    expect(repeatedKeys('{"permissions":{"default":"deny","tools":{},"default":"allow"}}')).toEqual(['permissions.default']);
    expect(repeatedKeys('{"a":1,"a":2,"a":3}')).toEqual(['a', 'a']);
    expect(repeatedKeys('{"rules":[{"tool":"x"},{"tool":"y","tool":"z"}]}')).toEqual(['rules[1].tool']);
  });

  it('tells keys by their decoded text, and ignores the same key in other objects and strings that look like keys', () => {
    expect(repeatedKeys('{"a":1,"\\u0061":2}')).toEqual(['a']);
    expect(repeatedKeys('{"a":{"a":{"a":1}},"b":["a","a"],"c":"\\"a\\":1,\\"a\\":2"}')).toEqual([]);
    expect(repeatedKeys('{"x":[{"k":1},{"k":2}],"y":{"k":[{"k":{}}]}}')).toEqual([]);
  });
});
