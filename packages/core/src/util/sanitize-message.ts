// Error text that reaches a model must not carry host paths or stack frames.
const MAX_MESSAGE_CHARS = 2000;
const STACK_FRAME = /^\s*at .*$/gm;
const FILE_URL = /file:\/\/\/?[^\s'"`)]*/g;
// Directory names may hold spaces and any letters ("/Users/Jane Doe/Library/Application
// Support/acme/x.json", "/home/jürgen/..."): a space inside a segment still followed by a
// slash is part of the path; the last segment ends at the first space. A leading "~" goes too.
const POSIX_PATH = /~?(?<![\p{L}\p{N}_.])\/(?:[\p{L}\p{N}_.@+~-]+(?: [\p{L}\p{N}_.@+~-]+)*\/)+[\p{L}\p{N}_.@+~-]*/gu;
const WINDOWS_PATH = /\b[A-Za-z]:\\(?:[^\\\s'"`]+(?: [^\\\s'"`]+)*\\)*[^\\\s'"`]*/g;

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
