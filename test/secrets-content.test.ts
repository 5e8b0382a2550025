// Secrets by content: a file holding a token or a key (a `.env`, an `.npmrc`, any file) is a
// `secret` capture gap wherever takeback reads it — a command's scan, a file tool's "before", the
// copy of a committed file git kept, the copy an undo keeps of what it replaces — and its bytes
// are nowhere under TAKEBACK_HOME. The check is secretlint's recommended rules, driven
// synchronously; @secretlint/core's own (asynchronous) run is the reference it is compared with.
import fs from 'node:fs';
import path from 'node:path';
import { lintSource } from '@secretlint/core';
import { creator as recommended } from '@secretlint/secretlint-rule-preset-recommend';
import { describe, expect, it } from 'vitest';
import { holdsSecret, isSecretPath, secretName, secretPlace, secretPlaceIn, secretsIn } from '../server/core/secrets.js';
import { sandbox, walkAll, type Sandbox } from './support/takeback.js';

/** A 1Password service account token: `ops_` and base64 of a JSON object (the rule decodes it). */
function opsToken(): string {
  let json = JSON.stringify({ signInAddress: 'my.1password.com', userAuth: { method: 'SRPg-4096', alg: 'PBES2g-HS256', iterations: 650000 }, email: 'ci@example.com' });
  while (json.length % 3 !== 1) json = json.replace('{', '{ ');
  return `ops_${Buffer.from(json).toString('base64')}`;
}

const GITHUB = `ghp_${'A1b2C3d4E5'.repeat(3)}x9Y8z7`;
const NPM_AUTH = '0f9e8d7c-6b5a-4321-9876-fedcba012345';

/** Contents the recommended rules report, one or more per rule, with the name they are in. */
const POSITIVES: [string, string][] = [
  ['.env', `GITHUB_TOKEN=${GITHUB}\n`],
  ['.npmrc', `//registry.npmjs.org/:_authToken=${NPM_AUTH}\n`],
  ['ci.sh', `export NPM_TOKEN=npm_${'k3Jd9sLq0Z'.repeat(3)}abcdef\n`],
  ['config.yaml', `aws_secret_access_key: ${'wJalrXUtnFEMIK7MDENGbPxRfiCYzq8hY1oR7q/2'}\n`],
  ['slack.txt', 'token: xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx\n'],
  ['hooks.md', 'https://hooks.slack.com/services/T0123ABCD/B0456EFGH/aBcDeFgHiJkLmNoPqRsTuVwX\n'],
  ['remote.txt', 'url = https://deployer:Zq81xPm3vK@git.example.org/repo.git\n'],
  ['ai.py', `client = OpenAI(api_key="sk-${'a1B2c3D4e5'.repeat(2)}T3BlbkFJ${'z9Y8x7W6v5'.repeat(2)}")\n`],
  ['linear.ts', `const key = 'lin_api_${'Qw3rTy7uI9'.repeat(4)}';\n`],
  ['id.txt', '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n'],
  ['mail.env', `SENDGRID=SG.${'nGeVfQFYQlK'.repeat(2)}.${'TwL2iGABf9DH'.repeat(3)}oTf09kq\n`],
  ['shop.env', `SHOPIFY=shpat_${'0123456789abcdef'.repeat(2)}\n`],
  ['op.env', `OP_SERVICE_ACCOUNT_TOKEN=${opsToken()}\n`],
  ['sa.json', JSON.stringify({ type: 'service_account', private_key_id: 'abc123', private_key: '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----\n' })],
  // Past the first line, in UTF-8 text around it, in a large file.
  ['big.ts', `${'// ünïcödé text line\n'.repeat(20_000)}const t = "${GITHUB}";\n`],
];

/** Contents the rules do not report, though many of them pass the prefilter. */
const NEGATIVES: [string, string][] = [
  ['a.txt', 'hello\n'],
  ['empty.txt', ''],
  ['cert.pem.txt', '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'],
  ['.npmrc', '//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n'],
  ['short.txt', 'ghp_short npm_short xoxb- SG.x lin_api_ ops_ey T3BlbkFJ\n'],
  ['url.txt', 'https://example.com/path?a=b and http://localhost:8080@x\n'],
  ['aws.md', 'Set AWS_SECRET_ACCESS_KEY in your shell.\n'],
  ['example.env', 'aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n'],
  ['not-sa.txt', '{"private_key_id": "x", "private_key": "-----BEGIN PRIVATE KEY-----"}'],
  ['bin.dat', '\u0000\u0001\u0002binary\u00ff'],
];

async function secretlintFinds(file: string, content: string): Promise<boolean> {
  const r = await lintSource({
    source: { filePath: file, content, ext: path.extname(file), contentType: 'text' },
    options: { config: { rules: [{ id: recommended.meta.id, rule: recommended }] }, noPhysicFilePath: true },
  });
  return r.messages.length > 0;
}

describe('holdsSecret: the recommended rules, synchronously', () => {
  it('agrees with @secretlint/core on every sample, secret or not', async () => {
    for (const [file, content] of [...POSITIVES, ...NEGATIVES]) {
      const reference = await secretlintFinds(file, content);
      expect(holdsSecret(Buffer.from(content), `/ws/${file}`), file).toBe(reference);
    }
    // The samples say what they are meant to say.
    for (const [file, content] of POSITIVES) expect(await secretlintFinds(file, content), file).toBe(true);
    for (const [file, content] of NEGATIVES) expect(await secretlintFinds(file, content), file).toBe(false);
  });

  it('a secret place is a secret whatever it holds, once anything in it looks like a key', () => {
    expect(holdsSecret(Buffer.from(`x ${GITHUB}`), '/ws/.ssh/notes.txt')).toBe(true);
    expect(holdsSecret(Buffer.from(`x ${GITHUB}`).subarray(0, 8), '/ws/a.txt')).toBe(false);
  });
});

/** The first file under `dir` whose bytes contain `needle`, or null. */
function anyFileContains(dir: string, needle: string): string | null {
  for (const f of walkAll(dir)) {
    if (fs.lstatSync(f).isFile() && fs.readFileSync(f).includes(needle)) return f;
  }
  return null;
}

/** New contents for `.env` and `.npmrc`, staged outside the workspace (the command line, which is kept, does not hold them). */
function stage(sb: Sandbox): { env: string; npmrc: string; NEW_GITHUB: string; NEW_NPM: string } {
  const NEW_GITHUB = `ghp_${'Z9y8X7w6V5'.repeat(3)}a1B2c3`;
  const NEW_NPM = '11112222-3333-4444-5555-666677778888';
  const env = path.join(sb.base, 'new.env');
  const npmrc = path.join(sb.base, 'new.npmrc');
  fs.writeFileSync(env, `GITHUB_TOKEN=${NEW_GITHUB}\nDEBUG=1\n`);
  fs.writeFileSync(npmrc, `//registry.npmjs.org/:_authToken=${NEW_NPM}\n`);
  return { env, npmrc, NEW_GITHUB, NEW_NPM };
}

describe('a file that holds a secret is a capture gap, its bytes never kept', () => {
  for (const via of ['command', 'file tool hooks'] as const) {
    it(`.env and .npmrc with tokens, changed by a ${via}: gap secret, no token under TAKEBACK_HOME, undo leaves them`, () => {
      const sb = sandbox();
      sb.write('.env', `GITHUB_TOKEN=${GITHUB}\n`);
      sb.write('.npmrc', `//registry.npmjs.org/:_authToken=${NPM_AUTH}\n`);
      sb.write('normal.txt', 'normal\n');
      // A baseline scan reads the old contents first (their bytes must not be kept either).
      expect(sb.tb(['run', '--', 'true']).code).toBe(0);
      const s = stage(sb);
      const script = `cat ${s.env} > .env && cat ${s.npmrc} > .npmrc && printf 'n2\\n' > normal.txt`;
      if (via === 'command') {
        expect(sb.tb(['run', '--', 'sh', '-c', script]).code).toBe(0);
      } else {
        // Claude Code's Write events for each file, the write between them, as the agent runs them.
        const ev = (name: string, file: string, id: string) => ({
          hook_event_name: name, cwd: sb.ws, session_id: 'sess-1', tool_name: 'Write', tool_use_id: id,
          tool_input: { file_path: sb.abs(file), content: '(see the file)' }, tool_response: { success: true },
        });
        expect(sb.hook({ hook_event_name: 'UserPromptSubmit', cwd: sb.ws, session_id: 'sess-1', prompt: 'set the tokens' }).code).toBe(0);
        for (const [i, f] of ['.env', '.npmrc', 'normal.txt'].entries()) {
          expect(sb.hook(ev('PreToolUse', f, `toolu_${i}`)).code).toBe(0);
          sb.sh(script.split(' && ')[i]!);
          expect(sb.hook(ev('PostToolUse', f, `toolu_${i}`)).code).toBe(0);
        }
        expect(sb.hook({ hook_event_name: 'Stop', cwd: sb.ws, session_id: 'sess-1' }).code).toBe(0);
      }
      const files = sb.json(['list']).sets.flatMap((set: any) => set.files);
      const byPath = Object.fromEntries(files.map((f: any) => [f.path, f]));
      expect(byPath['.env']).toMatchObject({ status: 'modified', gap: 'secret', undoable: false });
      expect(byPath['.npmrc']).toMatchObject({ status: 'modified', gap: 'secret', undoable: false });
      expect(byPath['normal.txt']).toMatchObject({ gap: null, undoable: true });
      expect(sb.tb(['list']).stdout).toMatch(/\.env .*\[gap: secret\]/);
      for (const token of [GITHUB, NPM_AUTH, s.NEW_GITHUB, s.NEW_NPM]) expect(anyFileContains(sb.home, token), token).toBeNull();

      const envNow = sb.read('.env');
      const undo = sb.json(['undo', sb.json(['list']).sets[0].id], { code: via === 'command' ? 6 : 0 });
      expect(undo.complete).toBe(via !== 'command');
      expect(undo.gaps.map((g: any) => [g.path, g.reason]).sort()).toEqual(via === 'command' ? [['.env', 'secret'], ['.npmrc', 'secret']] : []);
      expect(sb.read('.env')).toEqual(envNow);
    });
  }

  it('a file tool that takes the token out of a .env: the change is named secret (its before was), not too large', () => {
    const sb = sandbox();
    sb.write('.env', `GITHUB_TOKEN=${GITHUB}\n`);
    sb.tb(['capture', 'begin', '--id', 'w1', '--tool', 'Write', '.env']);
    sb.write('.env', 'DEBUG=1\n');
    sb.tb(['capture', 'end', '--id', 'w1']);
    const set = sb.json(['list']).sets[0];
    expect(set.files).toEqual([expect.objectContaining({ path: '.env', status: 'modified', gap: 'secret', undoable: false })]);
    expect(anyFileContains(sb.home, GITHUB)).toBeNull();
  });

  it('a committed .env that a command changes: the copy git keeps is not copied into the store', () => {
    const sb = sandbox({ git: true });
    sb.write('.env', `GITHUB_TOKEN=${GITHUB}\n`);
    sb.write('a.txt', 'a\n');
    sb.sh('git add -A && git -c user.name=t -c user.email=t@t commit -qm init');
    expect(sb.tb(['run', '--', 'true']).code).toBe(0);
    // The new content holds no secret: only the "before" (git's blob) does.
    expect(sb.tb(['run', '--', 'sh', '-c', 'printf "DEBUG=1\\n" > .env && printf "b\\n" > a.txt']).code).toBe(0);
    const set = sb.json(['list']).sets[0];
    const env = set.files.find((f: any) => f.path === '.env');
    expect(env).toMatchObject({ status: 'modified', gap: 'secret', undoable: false });
    expect(anyFileContains(sb.home, GITHUB)).toBeNull();
    expect(sb.json(['show', set.id]).files.find((f: any) => f.path === '.env').before.sha256).toBeNull();
  });

  it('a forced undo over a file that now holds a secret keeps no copy of it: the file is a gap, left as it is', () => {
    const sb = sandbox();
    sb.write('a.txt', 'v1\n');
    sb.write('b.txt', 'b1\n');
    expect(sb.tb(['run', '--', 'true']).code).toBe(0);
    expect(sb.tb(['run', '--', 'sh', '-c', 'printf "v2\\n" > a.txt && printf "b2\\n" > b.txt']).code).toBe(0);
    const id = sb.json(['list']).sets[0].id as string;
    // The person pastes a token into a.txt after the change (from outside the workspace).
    const s = stage(sb);
    fs.copyFileSync(s.env, sb.abs('a.txt'));
    const undo = sb.json(['undo', id, '--force'], { code: 6 });
    expect(undo.complete).toBe(false);
    expect(undo.gaps).toEqual([expect.objectContaining({ path: 'a.txt', reason: 'secret' })]);
    expect(sb.read('a.txt')).toEqual(fs.readFileSync(s.env));
    expect(sb.read('b.txt').toString()).toBe('b1\n');
    expect(anyFileContains(sb.home, s.NEW_GITHUB)).toBeNull();
  });
});

describe('secrets by place, asked a folder at a time', () => {
  it('answers for each child as isSecretPath does for its whole path', () => {
    const dirs = ['', 'src', 'a/.ssh', '.ssh', 'x/.docker', '.docker', 'deep/.aws/sub', 'back\\slash', 'a\\.ssh', 'home/.gnupg/x', '.sshx', 'K'];
    const names = ['id_rsa', 'config.json', 'server.PEM', 'x.\u212Aey', 'key', 'a.keystore', 'plain.ts', '.netrc', 'in\\.ssh\\f', 'x\\id_rsa', '.docker', 'notes.gpg.txt', 'c.asc'];
    let secret = 0;
    for (const dir of dirs) {
      const of = secretsIn(dir);
      for (const name of names) {
        const whole = dir === '' ? name : `${dir}/${name}`;
        expect(of(name), whole).toBe(isSecretPath(whole));
        if (of(name)) secret++;
      }
    }
    // A name's secret suffix, told by what follows its last dot, as by any of the suffixes it ends with.
    const suffixes = ['.pem', '.key', '.p12', '.pfx', '.jks', '.keystore', '.kdbx', '.gpg', '.asc', '.ppk'];
    for (const name of ['a.PEM', '.pem', 'x.tar.gpg', 'x.\u212Aey', 'İ.key', 'x.keys', 'key', 'a.b.', 'ΑΣ.asc', 'x.Σpem', 'p12', 'a.kdbx.bak']) {
      expect(isSecretPath(`d/${name}`), name).toBe(suffixes.some((x) => name.toLowerCase().endsWith(x)));
    }
    expect(secret).toBeGreaterThan(30);
    expect(secret).toBeLessThan(dirs.length * names.length - 20);
  });

  it('answers once a name where the folder’s place allows, as secretsIn does, and passes a place down to its folders', () => {
    const dirs = ['', 'src', 'a/.ssh', '.ssh', 'x/.docker', '.docker', 'deep/.aws/sub', 'back\\slash', 'a\\.ssh', 'home/.gnupg/x', '.sshx', 'K'];
    const names = ['id_rsa', 'config.json', 'server.PEM', 'x.\u212Aey', 'key', 'a.keystore', 'plain.ts', '.netrc', 'in\\.ssh\\f', 'x\\id_rsa', '.docker', '.ssh', '.aws', 'notes.gpg.txt', 'c.asc'];
    const places = new Set<string>();
    for (const dir of dirs) {
      const place = secretPlace(dir);
      places.add(place);
      const of = secretsIn(dir);
      for (const name of names) {
        const said = place === 'all' ? true : place === 'ask' ? null : secretName(name) === 'ask' ? null : secretName(name) === 'yes';
        if (said !== null) expect(said, `${dir}/${name}`).toBe(of(name));
        expect(secretPlaceIn(place, name), `${dir}/${name}`).toBe(secretPlace(dir === '' ? name : `${dir}/${name}`));
      }
    }
    expect([...places].sort()).toEqual(['all', 'ask', 'names']);
  });
});
