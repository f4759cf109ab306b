// Text the model or a client sent, repeated in a message only so long: a name or key of
// megabytes would otherwise come back whole.

/** `text` cut to `max` characters, with an ellipsis when cut. */
export function shortened(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
