// Colour only for a person at a terminal, and never when NO_COLOR is set (no-color.org).
const codes = { red: [31, 39], green: [32, 39], yellow: [33, 39], dim: [2, 22], bold: [1, 22], cyan: [36, 39] } as const;
export type Style = keyof typeof codes;

export function useColor(stream: NodeJS.WriteStream): boolean {
  return stream.isTTY === true && (process.env.NO_COLOR ?? '') === '' && process.env.TERM !== 'dumb';
}

export function stylist(enabled: boolean): (style: Style, text: string) => string {
  return (style, text) => (enabled ? `\u001b[${codes[style][0]}m${text}\u001b[${codes[style][1]}m` : text);
}
