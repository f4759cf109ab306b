// Integer literals JSON.parse cannot keep: past 2^53 a double rounds them, so an id the model
// wrote as 9007199254740993 would reach the tool (and the permission rules) as
// 9007199254740992, another record. Found in the text (scan-json-text.ts), because the
// parsed value no longer shows them.

/** Fewer digits always fit a double exactly (2^53 has 16). */
export const EXACT_DIGITS = 15;

const LITERAL = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * Whether a number literal, in any notation (9007199254740993, 9007199254740993.0,
 * 9.007199254740993e15), denotes an integer past 2^53 that the double JSON.parse makes of it
 * is not. Only literals written with more significant digits than a double holds: 1e23 is a
 * float's way of writing a large number, not an id.
 */
export function isRoundedInteger(literal: string): boolean {
  const match = LITERAL.exec(literal);
  if (match === null) return false;
  const [, whole = '', fraction = '', exponentText = '0'] = match;
  const digits = `${whole}${fraction}`.replace(/^0+/, '');
  if (digits.replace(/0+$/, '').length <= EXACT_DIGITS) return false;
  const exponent = Number(exponentText) - fraction.length;
  const value = Number(literal);
  // Past a double's range it is Infinity, which the caller refuses on its own.
  if (!Number.isFinite(value) || Math.abs(value) <= Number.MAX_SAFE_INTEGER) return false;
  let exact: bigint;
  if (exponent >= 0) exact = BigInt(digits) * 10n ** BigInt(exponent);
  else {
    const cut = digits.length + exponent;
    // A fraction that is not zero: a float, rounded as floats are.
    if (cut <= 0 || /[^0]/.test(digits.slice(cut))) return false;
    exact = BigInt(digits.slice(0, cut));
  }
  return exact !== BigInt(Math.abs(value));
}
