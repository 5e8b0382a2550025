import * as v from 'valibot';

/*
 * Helpers for the params schemas, and the selector every undo, redo and preview takes. Each
 * schema is the one check of its params: the sidecar validates what arrives with it, and its
 * TypeScript types are inferred from it.
 */

/**
 * An optional field: absent, `null` (taken as absent, as some clients send it) or the schema's
 * value. Its output is the value or `undefined`.
 */
export function maybe<const S extends v.GenericSchema>(schema: S) {
  return v.pipe(
    v.nullish(schema),
    v.transform((x): v.InferOutput<S> | undefined => x ?? undefined),
  );
}

/** A list of strings. */
export const StringList = v.array(v.string());

/**
 * Which change sets an undo, redo or preview is about. Exactly one of `ids`, `turn`, `last`,
 * `afterTurn`; `paths` narrows any of them to those files. Any other field is refused.
 */
export const Selector = v.pipe(
  v.strictObject({
    /** One or more change set ids (decimal strings). */
    ids: maybe(StringList),
    /** Every set of a turn: its id (`t3`) or its number (`3`). */
    turn: maybe(v.string()),
    /**
     * Undo: the newest set still applied. Redo: what the most recent undo step took back (every
     * set of it still undone, e.g. a whole turn), oldest first, as one step. With `paths`: the
     * newest such set, or step, touching them (of a step, its sets that touch them).
     */
    last: maybe(v.boolean()),
    /** Everything after a turn (rewind to that boundary). */
    afterTurn: maybe(v.string()),
    /**
     * With `turn` or `afterTurn`: take too what changed during a turn that no tool call claimed
     * (its set "changed during this turn"), which is left as it is (named in `skipped`) when the
     * turn's agent reported its tool calls. The person's saves are never taken by these.
     */
    includeUnclaimed: maybe(v.boolean()),
    /**
     * Workspace-relative paths (`/` separators), or absolute paths inside the workspace: only
     * these files of the selected sets. A path outside the workspace is `OutsideWorkspace`.
     */
    paths: maybe(StringList),
    /**
     * With exactly one path: only the hunks of the selected changes that touch these lines
     * (1-based, inclusive, `start <= end`) of the file as it is now (the client's document when it
     * is open). A range that touches no hunk still to move is `NotFound`; a path that has no hunks
     * (binary, a link, created or deleted by the change) is `InvalidParams`.
     */
    lines: maybe(v.strictObject({ start: v.pipe(v.number(), v.integer(), v.minValue(1)), end: v.pipe(v.number(), v.integer(), v.minValue(1)) })),
  }),
  v.check((s) => [s.ids?.length, s.turn !== undefined, s.last, s.afterTurn !== undefined].filter(Boolean).length === 1, 'needs exactly one of ids, turn, last, afterTurn'),
  v.check((s) => !s.includeUnclaimed || s.turn !== undefined || s.afterTurn !== undefined, 'includeUnclaimed goes with turn or afterTurn'),
  v.check((s) => s.lines === undefined || (s.paths?.length === 1 && s.lines.end >= s.lines.start), 'lines needs exactly one path and start <= end'),
);

/** A selector as a client sends it. */
export type Selector = v.InferInput<typeof Selector>;

/** The direction of a step: `undo` (the default) or `redo`. */
export const StepDirection = v.picklist(['undo', 'redo']);
