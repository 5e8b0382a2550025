/**
 * The paths a Codex `apply_patch` patch touches, read from its own text (the hook event carries
 * no path): `*** Add File: P`, `*** Update File: P`, `*** Delete File: P`, and the destination of
 * a move, `*** Move to: P` (which follows an Update File). Paths are as written in the patch
 * (relative to the agent's `cwd`, or absolute); each appears once, in order of first mention.
 * The format is Codex's own (its `apply_patch` tool instructions): a patch begins with
 * `*** Begin Patch` and ends with `*** End Patch`; anything else in it is hunk text, ignored here.
 */
export function patchPaths(patch: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const raw of patch.split(/\r?\n/)) {
    const m = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/.exec(raw);
    if (!m) continue;
    const p = m[1]!.trim();
    if (p === '' || seen.has(p)) continue;
    seen.add(p);
    out.push(p);
  }
  return out;
}
