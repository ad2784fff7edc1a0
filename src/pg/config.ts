import { readFileSync } from 'node:fs';
import { ERROR_CODES, WardError } from '../errors.js';

/**
 * Where a PostgreSQL store is and how to log in (docs/cluster.md "Connecting"). The location is a
 * `postgres://` or `postgresql://` URL from `--store` or `WARD_STORE_URL`; whatever the URL leaves
 * out comes from the standard libpq variables (`PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`,
 * `PGPASSWORD`, `~/.pgpass` / `PGPASSFILE`), which the `pg` client reads itself.
 *
 * A password written into a command line is visible to every local user (`ps`), so a URL with a
 * password is refused when it came from argv: the password comes from `PGPASSWORD`, a password file
 * (`--store-password-file`, `WARD_STORE_PASSWORD_FILE`, `~/.pgpass`) or `WARD_STORE_URL`.
 */

export interface StoreLocationInput {
  /** `--store` (argv). */
  flag?: string | undefined;
  env?: NodeJS.ProcessEnv;
  /** `--store-password-file`. */
  passwordFile?: string | undefined;
}

export type StoreLocation = { kind: 'level' } | { kind: 'postgres'; config: PgConnectionConfig };

export interface PgConnectionConfig {
  connectionString: string;
  password?: string | undefined;
  /** The URL without its password, for logs, `ward doctor` and errors. */
  display: string;
}

export function isPostgresUrl(value: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(value);
}

/** The store a command uses: `--store`, else `WARD_STORE_URL`, else the local LevelDB store. */
export function resolveStoreLocation(input: StoreLocationInput): StoreLocation {
  const env = input.env ?? process.env;
  const fromFlag = input.flag !== undefined && input.flag !== '';
  const raw = fromFlag ? input.flag! : env['WARD_STORE_URL'] ?? '';
  if (raw === '' || raw === 'level') return { kind: 'level' };
  if (!isPostgresUrl(raw)) {
    throw new WardError(ERROR_CODES.USAGE, `store location ${JSON.stringify(redact(raw))} is not a postgres:// URL`, {
      exitCode: 6,
      hint: 'pass --store postgres://user@host:5432/db (or set WARD_STORE_URL); leave it unset for the local store in .ward/',
    });
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WardError(ERROR_CODES.USAGE, `store URL ${JSON.stringify(redact(raw))} does not parse`, { exitCode: 6 });
  }
  if (fromFlag && url.password !== '') {
    throw new WardError(ERROR_CODES.USAGE, 'refusing a password in --store: command lines are visible to every local user', {
      exitCode: 6,
      hint: 'drop the password from the URL and set PGPASSWORD, use --store-password-file FILE (or WARD_STORE_PASSWORD_FILE, ~/.pgpass), or put the URL in WARD_STORE_URL',
    });
  }
  const passwordFile = input.passwordFile ?? env['WARD_STORE_PASSWORD_FILE'];
  const password = passwordFile ? readPasswordFile(passwordFile) : undefined;
  return { kind: 'postgres', config: { connectionString: raw, ...(password !== undefined ? { password } : {}), display: redact(raw) } };
}

function readPasswordFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new WardError(ERROR_CODES.IO, `read store password file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { exitCode: 6 });
  }
  // One line; a trailing newline is what editors and `echo` leave, not part of the password.
  const password = text.replace(/\r?\n$/, '');
  if (password === '' || /[\r\n]/.test(password)) {
    throw new WardError(ERROR_CODES.USAGE, `store password file ${path} must hold exactly one non-empty line`, { exitCode: 6 });
  }
  return password;
}

/** The URL with any password replaced by `***`. */
export function redact(raw: string): string {
  return raw.replace(/^(postgres(?:ql)?:\/\/[^:/@]*:)[^@]*@/i, '$1***@');
}
