import { createRequire } from 'node:module';

/**
 * Secrets: files whose bytes takeback never keeps. A change to one is recorded without its
 * content and named as a `secret` capture gap. A file is a secret by where it is
 * ({@link isSecretPath}: private keys, `.ssh`, `.gnupg` and credential stores) or by what it holds
 * ({@link holdsSecret}: a token or key that secretlint's recommended rules find, in a `.env`, an
 * `.npmrc` or any other file).
 */
const SECRET_DIRS = new Set(['.ssh', '.gnupg', '.password-store', '.aws', '.azure', '.kube']);
const SECRET_FILES = new Set([
  'id_rsa', 'id_dsa', 'id_ecdsa', 'id_ed25519', 'id_ecdsa_sk', 'id_ed25519_sk',
  '.netrc', '_netrc', '.git-credentials', '.pgpass', '.pypirc', 'credentials.json', 'secring.gpg',
]);
/** Each one dot and what follows it: a name ends with one when what follows its last dot is one (lower-cased). */
const SECRET_SUFFIXES = new Set(['.pem', '.key', '.p12', '.pfx', '.jks', '.keystore', '.kdbx', '.gpg', '.asc', '.ppk']);

/** True when `path` (any separators, relative or absolute) lies in a secret place. */
export function isSecretPath(path: string): boolean {
  // (A plain split where no separator repeats and none is a backslash: the same parts, cheaper.)
  const parts = path.includes('\\') || path.includes('//') ? path.split(/[\\/]+/) : path.split('/');
  for (let i = 0; i < parts.length - 1; i++) {
    if (SECRET_DIRS.has(parts[i]!)) return true;
  }
  return isSecretName(parts[parts.length - 1] ?? '', parts[parts.length - 2]);
}

/** {@link isSecretName}'s verdicts on names other than `config.json` (whose depends on its folder), at most 16,384: a walk asks about the same names in folder after folder. */
const secretNames = new Map<string, boolean>();

/** True when a file named `name` in a folder named `parent` (undefined at the top) is a secret by its name alone. */
function isSecretName(name: string, parent: string | undefined): boolean {
  if (name === 'config.json') return parent === '.docker';
  let secret = secretNames.get(name);
  if (secret !== undefined) return secret;
  const dot = name.lastIndexOf('.');
  secret = SECRET_FILES.has(name) || (dot >= 0 && SECRET_SUFFIXES.has(name.slice(dot).toLowerCase()));
  if (secretNames.size >= 16_384) secretNames.clear();
  secretNames.set(name, secret);
  return secret;
}

/**
 * {@link isSecretPath} for the children of folder `dir` (relative, `/`-separated, '' for the
 * top): `(name) => isSecretPath(dir/name)`, the folder's part worked out once (a walk asks for
 * every file of a folder).
 */
export function secretsIn(dir: string): (name: string) => boolean {
  const whole = (name: string) => isSecretPath(dir === '' ? name : `${dir}/${name}`);
  if (dir.includes('\\') || dir.includes('//') || dir.startsWith('/')) return whole;
  const parts = dir === '' ? [] : dir.split('/');
  if (parts.some((p) => SECRET_DIRS.has(p))) return () => true;
  const parent = parts[parts.length - 1];
  return (name) => (name.includes('\\') || name.includes('/') ? whole(name) : isSecretName(name, parent));
}

/**
 * What a folder's place says of the secrets in it, for a walk that asks about many names
 * ({@link secretName}): 'all' (a file anywhere under `dir` is a secret: it lies in a secret
 * folder), 'names' (a file is one by its name alone, as {@link secretName} says), or 'ask' (an
 * odd path, with a backslash or an empty segment: ask {@link secretsIn} about each name). Gives
 * what {@link secretsIn} gives.
 */
export function secretPlace(dir: string): SecretPlace {
  if (dir.includes('\\') || dir.includes('//') || dir.startsWith('/')) return 'ask';
  return dir !== '' && dir.split('/').some((p) => SECRET_DIRS.has(p)) ? 'all' : 'names';
}

/** What {@link secretPlace} says of a folder's place. */
export type SecretPlace = 'all' | 'names' | 'ask';

/** {@link secretPlace} of the folder `name` in a folder whose place is `place` (a walk knows its folder's). */
export function secretPlaceIn(place: SecretPlace, name: string): SecretPlace {
  if (place === 'ask' || name === '' || name.includes('\\') || name.includes('/')) return 'ask';
  return place === 'all' || SECRET_DIRS.has(name) ? 'all' : 'names';
}

/**
 * Whether a file named `name` is a secret by its name alone in a folder whose place is 'names'
 * ({@link secretPlace}): 'yes', 'no', or 'ask' (its folder's name counts, or it holds a
 * separator: ask {@link secretsIn}). The same in every such folder: a walk asks once a name.
 */
export function secretName(name: string): 'yes' | 'no' | 'ask' {
  if (name === 'config.json' || name.includes('\\') || name.includes('/')) return 'ask';
  return isSecretName(name, undefined) ? 'yes' : 'no';
}

/*
 * Secrets by content: the rules of @secretlint/secretlint-rule-preset-recommend (AWS, GCP, npm,
 * Slack, basic auth in URLs, OpenAI, Linear, private keys, SendGrid, Shopify, GitHub, 1Password).
 *
 * Every file the capture and the scan read passes here, synchronously, so two things keep it off
 * the hot path. First a prefilter: one regular expression, over the bytes read as latin1, for what
 * each rule's pattern cannot match without (a token's prefix, a key's armour line, `user:pass@`
 * in a URL). The rules' patterns are ASCII, and a UTF-8 byte past 0x7f never reads as an ASCII
 * character in latin1, so the prefilter sees every match the rules would; most files stop here.
 * Then, for a file it lets through, the rules themselves, loaded on first use (about 10 ms) and
 * driven directly: secretlint's own `lintSource` is asynchronous, but each recommended rule's
 * `file` handler reports synchronously. The one rule whose handler awaits (GCP's `.p12` reader)
 * is never reached: a `.p12` file is a secret by its name, settled before the rules run.
 *
 * Stricter than secretlint on purpose: binary files are checked too (a token in a database file
 * is still a token), and a `secretlint-disable` comment does not make takeback keep the bytes.
 */
const PREFILTER = new RegExp(
  [
    '(?:SECRET|[Ss]ecret)_?(?:ACCESS|[Aa]ccess)_?(?:KEY|[Kk]ey)', // aws
    'private_key_id', // gcp (a service account's JSON key)
    ':x-oauth-basic@', '_authToken=', 'npm_[A-Za-z0-9_]{36}', // npm
    '(?:xoxb|xoxp|xapp|xoxa|xoxo|xoxr)-', '[Hh][Oo][Oo][Kk][Ss]\\.[Ss][Ll][Aa][Cc][Kk]\\.[Cc][Oo][Mm]', // slack
    ':\\/\\/[-a-zA-Z0-9_]{1,256}:[-a-zA-Z0-9_]{1,256}@', // basic auth
    'T3BlbkFJ', // openai
    'lin_api_', // linear
    '-----BEGIN', // private keys
    'SG\\.\\w', // sendgrid
    '(?:shppa|shpca|shpat|shpss)_', // shopify
    '(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{36}', // github
    'ops_ey', // 1password
  ].join('|'),
);

/** The parts of a secretlint rule this module drives (the types of @secretlint/types, narrowed). */
interface Rule {
  meta: { id: string; supportedContentTypes: string[] };
  create(context: object, options: object): { file?(source: object): unknown };
}

/** The preset's rules once loaded; null when this Node cannot load them (see {@link rules}). */
let loaded: Rule[] | null | undefined;

/**
 * The recommended rules. The preset is an ES module, loaded with `require` (Node 20.19 and later
 * load an ES module that way, synchronously); where that fails, null, and every file the
 * prefilter lets through is taken for a secret: takeback would rather keep too little than a key.
 */
function rules(): Rule[] | null {
  if (loaded === undefined) {
    try {
      const preset = createRequire(import.meta.url)('@secretlint/secretlint-rule-preset-recommend') as { rules: Rule[] };
      loaded = preset.rules;
    } catch {
      loaded = null;
    }
  }
  return loaded;
}

/** Thrown by the report of {@link holdsSecret}'s rule context: one finding is enough. */
const FOUND = Symbol('secret found');

/**
 * True when `bytes` (a file's whole content) hold a secret that secretlint's recommended rules
 * find. `path` (any form) gives the extension some rules go by (`.json` for GCP's keys). Never
 * throws; costs one regular expression pass over the bytes unless the prefilter matches.
 */
export function holdsSecret(bytes: Uint8Array, path: string): boolean {
  if (bytes.length === 0) return false;
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  if (!PREFILTER.test(buf.toString('latin1'))) return false;
  // A secret place is a secret whatever it holds (and GCP's `.p12` reader is never started).
  if (isSecretPath(path)) return true;
  const all = rules();
  if (!all) return true;
  const slash = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  const dot = path.lastIndexOf('.');
  const ext = dot > slash + 1 ? path.slice(dot) : '';
  const source = sourceCode(buf.toString('utf8'), path, ext);
  const context = {
    sharedOptions: {},
    createTranslator: () => (messageId: string, data?: unknown) => ({ message: messageId, messageId, data }),
    report: () => {
      throw FOUND;
    },
    ignore: () => {},
  };
  for (const rule of all) {
    if (!rule.meta.supportedContentTypes.some((t) => t === 'text' || t === 'all')) continue;
    try {
      const handled = rule.create(context, {}).file?.(source);
      // An asynchronous handler's first steps ran above; what it would find later is not waited for.
      if (handled instanceof Promise) handled.catch(() => {});
    } catch (e) {
      if (e === FOUND) return true;
      // A rule that fails on this content finds nothing in it (as secretlint's own run would fail).
    }
  }
  return false;
}

/**
 * The source a rule's `file` handler reads: `content` as text, named `path` (the npm rule looks
 * for `_authToken=` in a file named `.npmrc`), with no physical path: no rule reads the disk.
 */
function sourceCode(content: string, path: string, ext: string): object {
  const hasBOM = content.charCodeAt(0) === 0xfeff;
  const text = hasBOM ? content.slice(1) : content;
  let lineStarts: number[] | undefined;
  const starts = () => {
    if (!lineStarts) {
      lineStarts = [0];
      for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lineStarts.push(i + 1);
    }
    return lineStarts;
  };
  const indexToPosition = (index: number) => {
    const s = starts();
    let lo = 0;
    let hi = s.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (s[mid]! <= index) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: index - s[lo]! };
  };
  const positionToIndex = (pos: { line: number; column: number }) => (starts()[pos.line - 1] ?? text.length) + pos.column;
  return {
    hasBOM,
    content: text,
    filePath: path,
    physicalFilePath: undefined,
    contentType: 'text',
    ext,
    getFilePath: () => path,
    getPhysicalFilePath: () => undefined,
    indexToPosition,
    positionToIndex,
    rangeToLocation: (range: readonly [number, number]) => ({ start: indexToPosition(range[0]), end: indexToPosition(range[1]) }),
    locationToRange: (loc: { start: { line: number; column: number }; end: { line: number; column: number } }) => [positionToIndex(loc.start), positionToIndex(loc.end)],
  };
}
