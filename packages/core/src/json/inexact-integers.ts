// Integer literals JSON.parse cannot keep: past 2^53 a double rounds them, so an id the model
// wrote as 9007199254740993 would reach the tool (and the permission rules) as
// 9007199254740992, another record. Found in the text, because the parsed value no longer
// shows them.

/** Fewer digits always fit a double exactly (2^53 has 16). */
const EXACT_DIGITS = 15;

/** The values JSON.parse gives the integer literals of `text` it rounds, each with the literal as written. */
export function inexactIntegers(text: string): Map<number, string> {
  const rounded = new Map<number, string>();
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text.charCodeAt(index);
    if (inString) {
      if (char === 92 /* \ */) index += 1;
      else if (char === 34 /* " */) inString = false;
    } else if (char === 34) inString = true;
    else if (char === 45 /* - */ || (char >= 48 && char <= 57)) {
      let end = index + 1;
      while (end < text.length && isNumberChar(text.charCodeAt(end))) end += 1;
      const literal = text.slice(index, end);
      if (literal.length > EXACT_DIGITS && /^-?\d+$/.test(literal) && BigInt(literal) !== BigInt(Number(literal))) rounded.set(Number(literal), literal);
      index = end - 1;
    }
  }
  return rounded;
}

function isNumberChar(char: number): boolean {
  // digits, '.', 'e', 'E', '+', '-'
  return (char >= 48 && char <= 57) || char === 46 || char === 101 || char === 69 || char === 43 || char === 45;
}
