// A numeric option checked by path: missing takes the default, anything else must be a whole number in range.
import { SandboxError } from '../errors/sandbox-error.js';

export function wholeNumber(value: unknown, fallback: number, min: number, max: number, path: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw new SandboxError('INVALID_OPTION', `${path} must be a whole number from ${min} to ${max}`);
  return value;
}
