// The CLI's bad-usage error is a member of the one family: an AirlockError with a catalogued code.
import { AirlockError, ERROR_CODES } from '@airlock/core';
import { expect, it } from 'vitest';
import { UsageError } from '../src/index.js';
import { UnknownOptionError } from '../src/support/parse-command-args.js';

it('UsageError (and UnknownOptionError) is an AirlockError coded INVALID_USAGE', () => {
  for (const error of [new UsageError('--format must be "cards" or "messages"'), new UnknownOptionError('run', '--plugns')]) {
    expect(UsageError.isInstance(error)).toBe(true);
    expect(AirlockError.isInstance(error)).toBe(true);
    expect(error.code).toBe('INVALID_USAGE');
    expect(ERROR_CODES).toContain(error.code);
  }
  expect(UsageError.isInstance(new AirlockError('INVALID_OPTION', 'x'))).toBe(false);
});
