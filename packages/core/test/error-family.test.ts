// One branded family: every error Airlock throws is an AirlockError with a stable code from
// the one catalogue, recognised across copies of the package by its Symbol.for marker.
import { describe, expect, it } from 'vitest';
import { AirlockError, ERROR_CODES, RESULT_CODES, ToolCallError, createEngine } from '../src/index.js';

describe('the error family', () => {
  it('a ToolCallError is an AirlockError, and an AirlockError is not a ToolCallError', () => {
    const chosen = new ToolCallError('CPU_LIMIT', 't: used more than 10 ms of CPU');
    const plain = new AirlockError('INVALID_OPTION', 'options.x must be a number', { path: 'options.x' });
    expect(AirlockError.isInstance(chosen)).toBe(true);
    expect(ToolCallError.isInstance(chosen)).toBe(true);
    expect(ToolCallError.isInstance(plain)).toBe(false);
    expect(chosen).toBeInstanceOf(Error);
    expect([chosen.name, chosen.code]).toEqual(['ToolCallError', 'CPU_LIMIT']);
  });

  it('isInstance works across copies of the package, by marker, not by name', () => {
    // What a second install's instance looks like: another class, the same registered symbol.
    const fromAnotherCopy = Object.assign(new Error('x'), { [Symbol.for('airlock.error')]: true, [Symbol.for('airlock.error.ToolCallError')]: true, code: 'TIMEOUT' });
    expect(AirlockError.isInstance(fromAnotherCopy)).toBe(true);
    expect(ToolCallError.isInstance(fromAnotherCopy)).toBe(true);
    // A name and a code are not a brand.
    const lookalike = Object.assign(new Error('x'), { name: 'ToolCallError', code: 'TIMEOUT' });
    expect(ToolCallError.isInstance(lookalike)).toBe(false);
    expect(AirlockError.isInstance(null)).toBe(false);
    expect(AirlockError.isInstance('AirlockError')).toBe(false);
  });

  it('details are frozen data and the cause is kept', () => {
    const cause = new Error('root');
    const error = new AirlockError('SCHEDULER_FAILED', 'm', { callId: 'c1' }, { cause });
    expect(error.details).toEqual({ callId: 'c1' });
    expect(Object.isFrozen(error.details)).toBe(true);
    expect(error.cause).toBe(cause);
  });

  it('thrown errors carry a catalogued code and their details', () => {
    let caught: unknown;
    try {
      createEngine({ policy: { default: 'allow' }, maxParallel: 0 });
    } catch (error) {
      caught = error;
    }
    expect(AirlockError.isInstance(caught)).toBe(true);
    const error = caught as AirlockError;
    expect(ERROR_CODES).toContain(error.code);
    expect(error.details).toEqual({ path: 'options.maxParallel' });
  });

  it('the thrown catalogue and the result codes never share a name', () => {
    expect(ERROR_CODES.filter((code) => (RESULT_CODES as readonly string[]).includes(code))).toEqual([]);
  });
});
