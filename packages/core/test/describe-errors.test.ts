// The INVALID_ARGS message lists the first distinct problems and counts the rest: the model
// learns what to fix, and a megabyte of wrong items does not cost the host a description of
// each. A validator keeps the step budget it was compiled with.
import { describe, expect, it } from 'vitest';
import { compileValidator, describeValidationErrors } from '../src/index.js';

const tags = compileValidator(Object.freeze({ type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } } } }), 'tag', 'parameters');

describe('describeValidationErrors', () => {
  it('lists eight problems and counts the others, however many there are', () => {
    const value = { tags: Array.from({ length: 5000 }, () => 1) };
    expect(tags(value, JSON.stringify(value).length)).toBe(false);
    const message = describeValidationErrors(tags.errors);
    expect(message.split('; ').slice(0, 8)).toEqual(Array.from({ length: 8 }, (_, index) => `/tags/${index}: must be string, got integer`));
    expect(message.endsWith('; and 4992 more')).toBe(true);
  });

  it('says nothing of more when there are none', () => {
    const value = { tags: ['a', 2, 'c'] };
    expect(tags(value, JSON.stringify(value).length)).toBe(false);
    expect(describeValidationErrors(tags.errors)).toBe('/tags/1: must be string, got integer');
  });

  it('names the key a propertyNames rule refuses, says what "not" means, and echoes at most 128 characters of a path or key', () => {
    const strict = compileValidator(Object.freeze({ type: 'object', propertyNames: { pattern: '^[a-z_]+$' }, properties: { mode: { not: { const: 'x' } } }, additionalProperties: false }), 'strict', 'parameters');
    const value = { 'Bad-Key': 1, mode: 'x' };
    expect(strict(value, JSON.stringify(value).length)).toBe(false);
    expect(describeValidationErrors(strict.errors)).toBe('property name "Bad-Key": must match pattern "^[a-z_]+$"; property name "Bad-Key" is not allowed by the schema; unexpected property "Bad-Key" (not allowed by the schema); /mode: must not be a value the schema excludes ("not")');
    const huge = { ['k'.repeat(400_000)]: 1 };
    expect(strict(huge, JSON.stringify(huge).length)).toBe(false);
    const message = describeValidationErrors(strict.errors);
    expect(message.length).toBeLessThan(600);
    expect(message).toContain(`"${'k'.repeat(128)}…"`);
  });
});

describe('compileValidator', () => {
  it('keeps the budget it was asked for when the schema was compiled before with another', () => {
    const schema = Object.freeze({ type: 'object', properties: { list: { type: 'array', items: { type: 'integer' } } } });
    const roomy = compileValidator(schema, 't', 'parameters');
    const tight = compileValidator(schema, 't', 'parameters', { baseSteps: 10, stepsPerChar: 0 });
    const value = { list: Array.from({ length: 1000 }, (_, index) => index) };
    expect(roomy(value)).toBe(true);
    expect(tight(value)).toBe(false);
    expect(tight.errors?.[0]?.message).toContain('needs more than 10 steps');
  });
});
