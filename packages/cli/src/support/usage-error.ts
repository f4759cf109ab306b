// Bad usage or bad input: exit 2 with one clear line, never a stack trace.
import { AirlockError } from '@airlock/core';

const marker = 'airlock.error.UsageError';
const symbol = Symbol.for(marker);

export class UsageError extends AirlockError {
  private readonly [symbol] = true; // read by isInstance
  declare readonly code: 'INVALID_USAGE';

  constructor(message: string, details: Record<string, unknown> = {}) {
    super('INVALID_USAGE', message, details);
    this.name = 'UsageError';
  }

  static override isInstance(value: unknown): value is UsageError {
    return AirlockError.hasMarker(value, marker);
  }
}
