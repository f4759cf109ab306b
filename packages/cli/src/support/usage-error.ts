// Bad usage or bad input: exit 2 with one clear line, never a stack trace.
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
