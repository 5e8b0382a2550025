/**
 * `arg` as a POSIX shell reads it back: as it is when it holds only characters no shell treats
 * specially (letters, digits and `_@%+=:,./-`), else in single quotes, each `'` in it written
 * `'\''`. For command lines takeback shows or writes into agents' and editors' settings.
 */
export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
