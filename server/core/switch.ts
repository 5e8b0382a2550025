/**
 * The values (any case) that turn one of takeback's on-by-default switches off: `0`, `false`,
 * `off`, `no` (TAKEBACK_HOOK_DAEMON, TAKEBACK_HOOK_EARLY, TAKEBACK_WATCH; bin/takeback.js and the
 * hook client, native/hook-client.c, read the same list for the first of them). Unset or anything
 * else leaves the switch on.
 */
export const SWITCH_OFF = ['0', 'false', 'off', 'no'];

/** True when `value` (a variable's value, or undefined when unset) turns its switch off. */
export function switchedOff(value: string | undefined): boolean {
  return SWITCH_OFF.includes((value ?? '').toLowerCase());
}
