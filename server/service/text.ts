/*
 * Wording shared by the command line and the sidecar, which both say things to people.
 */

/** `1 file`, `3 files`; `many` for a word whose plural is not `one` + `s`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
