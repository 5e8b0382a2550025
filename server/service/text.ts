/*
 * Wording shared by the command line and the sidecar, which both say things to people.
 */

/** `1 file`, `3 files`; `many` for a word whose plural is not `one` + `s`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * The hint of a conflict's `combined` ids, with `undo` the client's way of saying an undo of ids
 * (`takeback undo`, `:Takeback undo`): "`takeback undo 2 5` takes both back", "… takes them all
 * back" for more than two.
 */
export function takesBackHint(undo: string, combined: string[]): string {
  return `\`${undo} ${combined.join(' ')}\` takes ${combined.length === 2 ? 'both' : 'them all'} back`;
}
