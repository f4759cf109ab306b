// The longest delay a Node.js timer keeps: setTimeout fires at once for anything longer.
export const MAX_TIMER_MS = 2 ** 31 - 1;
