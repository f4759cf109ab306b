// Error text that reaches a model must not carry host paths or stack frames.
const MAX_MESSAGE_CHARS = 2000;
const STACK_FRAME = /^\s*at .*$/gm;
const FILE_URL = /file:\/\/\/?[^\s'"`)]*/g;
const POSIX_PATH = /(?<![\w.])\/(?:[\w.@+-]+\/)+[\w.@+-]*/g;
const WINDOWS_PATH = /\b[A-Za-z]:\\(?:[^\\\s'"`]+\\)*[^\\\s'"`]*/g;

export function sanitizeMessage(message: string, maxChars = MAX_MESSAGE_CHARS, ifEmpty = 'the tool failed without a message'): string {
  const cleaned = message
    .replace(STACK_FRAME, '')
    .replace(FILE_URL, '<path>')
    .replace(POSIX_PATH, '<path>')
    .replace(WINDOWS_PATH, '<path>')
    .replace(/\n{2,}/g, '\n')
    .trim();
  const text = cleaned.length > 0 ? cleaned : ifEmpty;
  return text.length > maxChars ? `${text.slice(0, maxChars)}… (truncated)` : text;
}

/** The message of anything thrown, without trusting its shape (getters may throw). */
export function messageOf(thrown: unknown): string {
  try {
    if (thrown instanceof Error) return String(thrown.message);
    if (typeof thrown === 'string') return thrown;
    return 'a non-Error value was thrown';
  } catch {
    return 'an unreadable error was thrown';
  }
}
