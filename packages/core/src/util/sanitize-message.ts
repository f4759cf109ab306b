// Error text that reaches a model must not carry host paths or stack frames.
const MAX_MESSAGE_CHARS = 2000;
// A frame as V8 writes it: "at fn (file:1:2)", "at file:1:2", "at fn (native)", "at <anonymous>",
// "at async Promise.all (index 0)".
// Indented with spaces or tabs only: a `\s*` there ran across lines, and a message of many
// newlines (a model's argument echoed in a tool's error) took quadratic time.
const STACK_FRAME = /^[ \t]*at .*(?::\d+:\d+\)?|\(native\)|\(index \d+\)|<anonymous>\)?)[ \t]*$/gm;
/** What the path patterns read of a message, its frames gone: its start, several times what is kept. */
const READ_FACTOR = 8;
const FILE_URL = /file:\/\/\/?[^\s'"`)]*/g;
// A path segment: anything a file name holds but a slash, whitespace, quotes and angle
// brackets; an apostrophe only inside a word (O'Brien); spaces (one or more, tabs, no-break)
// only between words of a directory name that a slash still follows. The last segment ends
// at the first space. A leading "~", "." or ".." goes with the path. One segment after a
// slash is a path too ("/flag.txt", "/root"): the slash must not follow a letter, digit or
// dot, so "and/or" and "HTTP/1.1" stay.
const SEGMENT = String.raw`(?:[^\s/'"\x60<>]|'(?=[^\s/'"\x60<>]))+`;
const SPACED = String.raw`${SEGMENT}(?:[ \t\u00a0]+${SEGMENT})*`;
const POSIX_PATH = new RegExp(String.raw`(?<![\p{L}\p{N}_.~])(?:~|\.{1,2})?\/(?:(?:${SPACED}\/)+(?:${SEGMENT})?|${SEGMENT})`, 'gu');
// A URL ends at a comma too: `http://proxy:3128,/home/alice/.ssh/id_rsa` is a URL and a path.
const WEB_URL = String.raw`\b[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s'"\x60<>,]*`;
const WEB_URL_START = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
/**
 * A URL's user and password: up to the last @ of the URL when a colon comes before it (a
 * password may hold @, /, ? or # unencoded: postgres://admin:s3cr@t!@db). A path's @ after a
 * port (host:8080/@user) is taken for one too: more hidden, never less.
 */
const USERINFO = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^@:]*:[^@]*@(?:[^@]*@)*/;
/** A user without a password (user@host), up to the first @: no secret, but no name either. */
const USER_ONLY = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#@:]*@/;
const WEB_URL_OR_POSIX_PATH = new RegExp(`${WEB_URL}|${POSIX_PATH.source}`, 'gu');
const WINDOWS_PATH = /(?:\b[A-Za-z]:|\\\\[^\\\s'"`]+)\\(?:[^\\\s'"`]+(?:[ \t\u00a0]+[^\\\s'"`]+)*\\)*[^\\\s'"`]*/g;

export function sanitizeMessage(message: string, maxChars = MAX_MESSAGE_CHARS, ifEmpty = 'the tool failed without a message'): string {
  // Frames first, over the whole message (linear), so that a cut never leaves half a frame.
  const withoutFrames = message.replace(STACK_FRAME, '');
  const read = withoutFrames.slice(0, READ_FACTOR * maxChars);
  const cleaned = read
    .replace(FILE_URL, '<path>')
    // A web URL's "//host/..." is no host path: matched first, kept as it is. A URL with no host
    // (unix:///var/run/docker.sock, sqlite:////srv/app/users.db) names a local path all the same.
    .replace(WEB_URL_OR_POSIX_PATH, (match) => {
      const scheme = WEB_URL_START.exec(match)?.[0];
      if (scheme === undefined || /^file:/i.test(match)) return '<path>';
      if (match[scheme.length] === '/') return `${scheme}<path>`;
      // A password in a URL (redis://:hunter2@10.0.0.5) is the host's secret, whatever the scheme.
      return USERINFO.test(match) ? match.replace(USERINFO, `${scheme}<credentials>@`) : match.replace(USER_ONLY, `${scheme}<credentials>@`);
    })
    .replace(WINDOWS_PATH, '<path>')
    .replace(/\n{2,}/g, '\n')
    .trim();
  const text = cleaned.length > 0 ? cleaned : ifEmpty;
  return text.length > maxChars || read.length < withoutFrames.length ? `${text.slice(0, maxChars)}… (truncated)` : text;
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
