/**
 * Colour for people at a terminal, nothing for pipes and files. `NO_COLOR` (no-color.org) and
 * `FORCE_COLOR` are honoured.
 */
export function useColor(stream: NodeJS.WriteStream = process.stdout): boolean {
  if (process.env.NO_COLOR) return false;
  if (process.env.FORCE_COLOR && process.env.FORCE_COLOR !== '0') return true;
  return Boolean(stream.isTTY);
}

const CODES = { bold: [1, 22], dim: [2, 22], red: [31, 39], green: [32, 39], yellow: [33, 39], cyan: [36, 39] } as const;
export type Style = keyof typeof CODES;

/** A painter: `paint('red', text)` when colour is on, else the text unchanged. */
export function painter(on: boolean): (style: Style, text: string) => string {
  return (style, text) => (on ? `\u001b[${CODES[style][0]}m${text}\u001b[${CODES[style][1]}m` : text);
}
