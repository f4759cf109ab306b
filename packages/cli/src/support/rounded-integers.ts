// An integer past 2^53 that JSON.parse rounded, found in a call's decoded arguments, and the
// words that refuse it: the same for `run` (a transcript's calls) and `serve` (tools/call).

/** An integer literal as written, and the number JSON.parse made of it. */
export interface RoundedInteger {
  readonly literal: string;
  readonly becomes: number;
}

/** The first number in a parsed JSON value that is one of `rounded`'s keys (core's roundedIntegers). Iterative: the value may be deep. */
export function roundedIntegerIn(value: unknown, rounded: ReadonlyMap<number, string>): RoundedInteger | undefined {
  if (rounded.size === 0) return undefined;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'number') {
      const literal = rounded.get(item);
      if (literal !== undefined) return { literal, becomes: item };
    }
    if (item !== null && typeof item === 'object') for (const child of Object.values(item)) stack.push(child);
  }
  return undefined;
}

/** "the integer 9007199254740993, which JSON cannot carry exactly (it would become 9007199254740992); send it as a string" */
export function roundedIntegerWords({ literal, becomes }: RoundedInteger): string {
  return `the integer ${literal.length > 40 ? `${literal.slice(0, 40)}…` : literal}, which JSON cannot carry exactly (it would become ${becomes}); send it as a string`;
}
