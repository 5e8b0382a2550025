// The preamble of a test file that needs a real agent CLI: without the binary its suites are
// skipped with a message, or, when one of the agent's TAKEBACK_REQUIRE_* variables is "1" (CI),
// a suite that fails says so instead.
import { describe, it } from 'vitest';
import { agentVersion, findAgentBin, installHint, type AgentBin } from './agent-bin.js';

/** An agent's binary as a test file found it. */
export interface GatedAgent {
  /** The binary, or undefined if none was found. */
  bin: string | undefined;
  /** Its `--version` number. */
  version: string | undefined;
  /** "SKIPPED: no claude binary found (run ...)": for the title of the suite `describe.skipIf` skips. */
  skipReason: string;
}

/**
 * Finds the agent's binary and its version. Without one: if the agent is required, registers a
 * suite `title` whose one test fails; if not, and `warn` is given, prints the skip reason after
 * that prefix (e.g. "[claude-e2e]").
 */
export function gateAgent(a: AgentBin, title: string, warn?: string): GatedAgent {
  const bin = findAgentBin(a);
  const skipReason = `SKIPPED: no ${a.name} binary found (${installHint(a)})`;
  if (bin) return { bin, version: agentVersion(a, bin), skipReason };
  if (a.requireVars.some((v) => process.env[v] === '1')) {
    const v = a.requireVars[0];
    describe(title, () => {
      it(`needs the ${a.name} binary (${v}=1)`, () => {
        throw new Error(`${v}=1 but no ${a.name} binary was found: ${installHint(a)}`);
      });
    });
  } else if (warn !== undefined) {
    console.warn(`${warn} ${skipReason}`);
  }
  return { bin, version: undefined, skipReason };
}
