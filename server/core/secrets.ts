/**
 * Secret places: paths whose bytes takeback never keeps, wherever they are. A change to one is
 * recorded without its content and named as a `secret` capture gap.
 *
 * The list follows Conch's `secretPlaces()` (ADR 0030): private keys, `.ssh`, `.gnupg` and
 * credential stores.
 */
const SECRET_DIRS = new Set(['.ssh', '.gnupg', '.password-store', '.aws', '.azure', '.kube']);
const SECRET_FILES = new Set([
  'id_rsa', 'id_dsa', 'id_ecdsa', 'id_ed25519', 'id_ecdsa_sk', 'id_ed25519_sk',
  '.netrc', '_netrc', '.git-credentials', '.pgpass', '.pypirc', 'credentials.json', 'secring.gpg',
]);
const SECRET_SUFFIXES = ['.pem', '.key', '.p12', '.pfx', '.jks', '.keystore', '.kdbx', '.gpg', '.asc', '.ppk'];

/** True when `path` (any separators, relative or absolute) lies in a secret place. */
export function isSecretPath(path: string): boolean {
  const parts = path.split(/[\\/]+/);
  for (let i = 0; i < parts.length - 1; i++) {
    if (SECRET_DIRS.has(parts[i]!)) return true;
  }
  const name = parts[parts.length - 1] ?? '';
  if (SECRET_FILES.has(name)) return true;
  if (name === 'config.json' && parts[parts.length - 2] === '.docker') return true;
  const lower = name.toLowerCase();
  return SECRET_SUFFIXES.some((s) => lower.endsWith(s));
}
