// Text from plugins or a model's message, made safe for a terminal: control characters
// (escape sequences among them) become "?", so nothing it says can move the cursor,
// rewrite earlier lines or retitle the window.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g;

/** Keeps newlines and tabs; `max` truncates with an ellipsis. */
export function printable(text: string, max = Infinity): string {
  const clean = text.replace(CONTROL, '?');
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

/** One line: newlines and tabs too become "?". */
export function printableLine(text: string, max = Infinity): string {
  return printable(text.replace(/[\n\t]/g, '?'), max);
}
