// doctor's Codex trust against the real Codex CLI: after `takeback init codex`, Codex's own
// `hooks/list` (codex app-server) gives each hook's trust key; config.toml holding the project's
// trust and a trusted hash for every key (what Codex's /hooks review saves) is what doctor calls
// trusted, and without them doctor says Codex will not run the hooks. Skipped without Codex on
// this machine, a failure with TAKEBACK_REQUIRE_AGENTS=1 (or TAKEBACK_REQUIRE_CODEX=1).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gateAgent } from './support/agent-gate.js';
import { CODEX_BIN, hookTrustToml, listCodexHooks, projectTrustToml } from './support/codex.js';
import { sandbox } from './support/takeback.js';

const { bin: CODEX, version: VERSION, skipReason: SKIP_REASON } = gateAgent(CODEX_BIN, 'real Codex CLI', '[doctor-codex-trust]');

describe.skipIf(!CODEX)(CODEX ? `doctor and the real Codex CLI ${VERSION}: hook trust` : `doctor and the real Codex CLI — ${SKIP_REASON}`, () => {
  it("trusted exactly when config.toml trusts the project and every hook by the keys Codex itself lists", async () => {
    const sb = sandbox({ git: true });
    const codexHome = path.join(sb.base, 'codex-home');
    fs.mkdirSync(codexHome);
    sb.env.CODEX_HOME = codexHome;
    // Another hook of the user's first on one event: takeback's is the second group there.
    const file = path.join(sb.ws, '.codex', 'hooks.json');
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: 'true', timeout: 5 }] }] } }));
    expect(sb.tb(['init', 'codex']).code).toBe(0);
    const config = path.join(codexHome, 'config.toml');
    fs.writeFileSync(config, projectTrustToml(sb.ws));
    const listed = await listCodexHooks({ cwd: sb.ws, codexHome, codex: CODEX!, timeoutMs: 60_000 });
    const ours = listed.hooks.filter((h) => h.sourcePath === file && h.command.includes('hook codex'));
    expect(ours.map((h) => h.eventName).sort()).toEqual(['postToolUse', 'preToolUse', 'sessionStart', 'stop', 'userPromptSubmit']);
    const check = () => sb.json(['doctor']).agents.find((c: any) => c.agent === 'codex' && c.file === file);
    expect(check()).toMatchObject({ installed: 'all', current: true, trusted: false });
    // Every hook of takeback's trusted but one: still not trusted.
    fs.writeFileSync(config, `${projectTrustToml(sb.ws)}\n${hookTrustToml(ours.slice(1))}`);
    expect(check()).toMatchObject({ trusted: false, trust: expect.stringMatching(/^1 of takeback's hooks here are not trusted/) });
    fs.writeFileSync(config, `${projectTrustToml(sb.ws)}\n${hookTrustToml(ours)}`);
    expect(check()).toMatchObject({ trusted: true });
    expect(sb.json(['doctor']).problems).toEqual([]);
  }, 120_000);
});
