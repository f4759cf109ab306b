// "Did you mean" for names a person typed: the closest known name by edit distance,
// offered only when it is close enough to be the likely intent.

/**
 * Edit distance, case-insensitive (a wrong case is one slip, not many), counting two
 * neighbouring letters swapped as one slip ("ehco" for "echo", "rnu" for "run").
 */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let beforePrevious: number[] = [];
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= y.length; j += 1) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) current[j] = Math.min(current[j]!, beforePrevious[j - 2]! + 1);
    }
    beforePrevious = previous;
    previous = current;
  }
  return previous[y.length]!;
}

/** The known name the typed one most likely meant, or undefined when none is close. */
export function closestName(typed: string, known: Iterable<string>): string | undefined {
  if (typed.length > 200) return undefined;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const name of known) {
    const d = distance(typed, name);
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  // About one slip per three letters: "defualt" finds "default", "x" finds nothing.
  const allowed = Math.max(1, Math.floor(typed.length / 3));
  return best !== undefined && bestDistance <= allowed ? best : undefined;
}

/** ` (did you mean "limits"?)`, or nothing, for appending to an error message. */
export function didYouMean(typed: string, known: Iterable<string>, quote = (name: string) => `"${name}"`): string {
  const name = closestName(typed, known);
  return name === undefined ? '' : ` (did you mean ${quote(name)}?)`;
}
