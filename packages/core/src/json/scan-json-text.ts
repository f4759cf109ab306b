// One pass over argument JSON text before it is parsed: how deep its brackets nest (bounded
// before anything recursive touches it) and which number literals JSON.parse would round
// (inexact-integers.ts). Linear, no recursion; brackets and digits inside strings are skipped.
import { EXACT_DIGITS, isRoundedInteger } from './inexact-integers.js';

export interface JsonTextScan {
  /** Deepest bracket nesting. */
  readonly depth: number;
  /** What JSON.parse makes of each integer literal it rounds, with the literal as written. */
  readonly rounded: Map<number, string>;
}

export function scanJsonText(text: string): JsonTextScan {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  const rounded = new Map<number, string>();
  for (let index = 0; index < text.length; index += 1) {
    const char = text.charCodeAt(index);
    if (inString) {
      if (char === 92 /* \ */) index += 1;
      else if (char === 34 /* " */) inString = false;
    } else if (char === 34) inString = true;
    else if (char === 123 || char === 91) {
      depth += 1;
      if (depth > deepest) deepest = depth;
    } else if (char === 125 || char === 93) depth -= 1;
    else if (char === 45 /* - */ || (char >= 48 && char <= 57)) {
      let end = index + 1;
      while (end < text.length && isNumberChar(text.charCodeAt(end))) end += 1;
      if (end - index > EXACT_DIGITS) {
        const literal = text.slice(index, end);
        if (isRoundedInteger(literal)) rounded.set(Number(literal), literal);
      }
      index = end - 1;
    }
  }
  return { depth: deepest, rounded };
}

function isNumberChar(char: number): boolean {
  // digits, '.', 'e', 'E', '+', '-'
  return (char >= 48 && char <= 57) || char === 46 || char === 101 || char === 69 || char === 43 || char === 45;
}
