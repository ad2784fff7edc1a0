import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { nowUTC } from '../../canon/index.js';
import { EXIT } from '../../contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../../errors.js';
import {
  buildJwks,
  defaultKeyPaths,
  generateSigningKey,
  jwkThumbprint,
  loadKeyRing,
  loadOrCreateDefaultKey,
  loadVerifyKeys,
  readPrivateKeyFile,
  readPublicKeyFile,
  keyFlagOptions,
  rotateDefaultKey,
  signingKeyFromKeyFlags,
  writeKeyPair,
  type KeyFlagPlace,
  type KeyFlags,
  type KeyMode,
  type ResolvedSigningKey,
  type ResolveSigningKeyOptions,
  type VerifyKey,
} from '../../keys/index.js';
import { writeFileAtomic } from '../../state/atomic-file.js';
import { STATE_DIR_HELP, stateDir, type CliContext } from '../context.js';
import { correlationId, goJsonLine } from '../output.js';

/** Flags shared by every command that signs (`approve`, `delegate mint`, `trace export`). */
export interface SigningKeyFlags {
  keyMode: KeyMode;
  privateKey?: string;
  privateKeyEnv?: string;
  stateDir?: string;
}

export function addSigningKeyOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option('--key-mode <mode>', 'signing key: default (.ward/keys, created on first use), dev (ephemeral) or prod (explicit key)')
        .choices(['default', 'dev', 'prod'])
        .default('default'),
    )
    .option('--private-key <file>', 'signing key file (reference base64, JWK or PEM)')
    .option('--private-key-env <var>', 'environment variable holding the signing key')
    .option('--state-dir <dir>', STATE_DIR_HELP);
}

/**
 * The signing key `--key-mode`, `--private-key` and `--private-key-env` name (`keys/flags.ts`, the
 * one mapping every signing command uses), read from the command's working directory and
 * environment; the default key is in `state` (default: the command's state directory).
 */
export function signingKeyFromFlags(ctx: CliContext, flags: KeyFlags & { stateDir?: string | undefined }, state?: string): ResolvedSigningKey {
  return signingKeyFromKeyFlags(flags, keyFlagPlace(ctx, flags, state));
}

/** The resolver's options for the flags, for a host that reads the key again on reload. */
export function signingKeyOptionsFromFlags(ctx: CliContext, flags: KeyFlags & { stateDir?: string | undefined }, state?: string): ResolveSigningKeyOptions {
  return keyFlagOptions(flags, keyFlagPlace(ctx, flags, state));
}

function keyFlagPlace(ctx: CliContext, flags: { stateDir?: string | undefined }, state: string | undefined): KeyFlagPlace {
  return { cwd: ctx.cwd, env: ctx.env, stateDir: state ?? stateDir(ctx, flags.stateDir) };
}

/** Flags shared by every command that verifies (`trace verify`, `delegate verify`). */
export interface VerifyKeyFlags {
  publicKey?: string;
  publicKeyEnv?: string;
  privateKey?: string;
  privateKeyEnv?: string;
  jwks?: string;
  stateDir?: string;
}

export function addVerifyKeyOptions(cmd: Command): Command {
  return cmd
    .option('--public-key <file>', 'verify key file (reference base64, JWK or PEM)')
    .option('--public-key-env <var>', 'environment variable holding the verify key')
    .option('--jwks <file>', 'verify with the Ed25519 keys of a JWKS')
    .option('--private-key <file>', 'derive the verify key from this private key')
    .option('--private-key-env <var>', 'derive the verify key from this environment variable')
    .option('--state-dir <dir>', 'Ward state directory whose key ring is used when no key flag is given');
}

/**
 * The verify keys for a command: the key flags when any is given, else every key in the state
 * directory's ring (current and retired). No key at all is an error, never a skipped check.
 */
export function verifyKeysFromFlags(ctx: CliContext, flags: VerifyKeyFlags): VerifyKey[] {
  const sources = {
    publicKeyPath: flags.publicKey,
    publicKeyEnv: flags.publicKeyEnv,
    privateKeyPath: flags.privateKey,
    privateKeyEnv: flags.privateKeyEnv,
    jwksPath: flags.jwks,
  };
  if (Object.values(sources).some((value) => value !== undefined && value !== '')) return loadVerifyKeys(sources, ctx.env, ctx.cwd);
  const dir = stateDir(ctx, flags.stateDir);
  const ring = loadKeyRing(dir);
  if (ring.length === 0) {
    throw new WardError(ERROR_CODES.KEY_MISSING, `public key not configured: no key flag given and no keys in ${defaultKeyPaths(dir).dir}`, {
      hint: "pass the signer's key with --public-key, --public-key-env or --jwks, or the signer's --state-dir",
    });
  }
  return ring;
}

interface KeysFlags {
  stateDir?: string;
  json?: boolean;
}

/** `ward keys init|rotate|verify|list|jwks`. */
export function register(program: Command, ctx: CliContext): void {
  const keys = program.command('keys').description('Ed25519 signing keys: create, rotate, check, list and publish (JWKS)');

  keys
    .command('init')
    .description("create Ward's signing key in <state>/keys (idempotent), or a named pair with --out-dir")
    .option('--out-dir <dir>', 'write <prefix>_private.key / <prefix>_public.key here instead of the state directory')
    .option('--prefix <prefix>', 'file name prefix with --out-dir', 'ward')
    .option('--force', 'with --out-dir, replace existing files')
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--json', 'one line of JSON on stdout')
    .action((flags: KeysFlags & { outDir?: string; prefix: string; force?: boolean }) => {
      if (flags.outDir) {
        const key = generateSigningKey();
        const written = writeKeyPair(resolve(ctx.cwd, flags.outDir), flags.prefix, key, flags.force === true);
        report(ctx, flags, { key_id: key.keyId, kid: jwkThumbprint(key), created: true, private_key_path: written.privatePath, public_key_path: written.publicPath }, `created key ${key.keyId}\n  private: ${written.privatePath}\n  public:  ${written.publicPath}`);
        return;
      }
      const { key, created, paths } = loadOrCreateDefaultKey(stateDir(ctx, flags.stateDir));
      report(
        ctx,
        flags,
        { key_id: key.keyId, kid: jwkThumbprint(key), created, private_key_path: paths.privateKey, public_key_path: paths.publicKey },
        `${created ? 'created' : 'using existing'} key ${key.keyId}\n  private: ${paths.privateKey}\n  public:  ${paths.publicKey}`,
      );
    });

  keys
    .command('rotate')
    .description('replace the current key; the old public key stays in <state>/keys/retired for verification')
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--json', 'one line of JSON on stdout')
    .action((flags: KeysFlags) => {
      const result = rotateDefaultKey(stateDir(ctx, flags.stateDir), nowUTC());
      report(
        ctx,
        flags,
        { key_id: result.key.keyId, kid: jwkThumbprint(result.key), retired_key_id: result.retired?.keyId ?? '', retired_path: result.retiredPath },
        result.retired
          ? `rotated: new key ${result.key.keyId}; ${result.retired.keyId} retired (verify-only) at ${result.retiredPath}`
          : `no previous key; created ${result.key.keyId}`,
      );
    });

  keys
    .command('verify')
    .description('check that a private and a public key file form a pair (default: the state directory pair)')
    .option('--private-key <file>', 'private key file')
    .option('--public-key <file>', 'public key file')
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--json', 'one line of JSON on stdout')
    .action((flags: KeysFlags & { privateKey?: string; publicKey?: string }) => {
      const paths = defaultKeyPaths(stateDir(ctx, flags.stateDir));
      const privatePath = flags.privateKey ? resolve(ctx.cwd, flags.privateKey) : paths.privateKey;
      const publicPath = flags.publicKey ? resolve(ctx.cwd, flags.publicKey) : paths.publicKey;
      const privateKey = readPrivateKeyFile(privatePath);
      const publicKey = readPublicKeyFile(publicPath);
      const fields = { key_id: privateKey.keyId, private_key_path: privatePath, public_key_path: publicPath };
      if (!privateKey.publicRaw.equals(publicKey.publicRaw)) {
        const error = 'public key does not match private key';
        if (flags.json) ctx.stdout(goJsonLine({ ok: false, correlation_id: correlationId(ctx.argv), ...fields, public_key_id: publicKey.keyId, error }) + '\n');
        else ctx.stderr(`key pair mismatch: ${error}\n  private: ${privatePath} (${privateKey.keyId})\n  public:  ${publicPath} (${publicKey.keyId})\n`);
        ctx.exitCode = EXIT.VERIFY_FAILED;
        return;
      }
      report(ctx, flags, fields, `key pair ok: ${privateKey.keyId}`);
    });

  keys
    .command('list')
    .description('list the keys that verify traces in this state directory (current and retired)')
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .option('--json', 'one line of JSON on stdout')
    .action((flags: KeysFlags) => {
      const ring = loadKeyRing(stateDir(ctx, flags.stateDir));
      const list = ring.map((key) => ({ key_id: key.keyId, kid: jwkThumbprint(key), status: key.status, path: key.path }));
      report(ctx, flags, { keys: list }, list.length === 0 ? 'no keys (run: ward keys init)' : list.map((k) => `${k.status.padEnd(8)} ${k.key_id}  ${k.path}`).join('\n'));
    });

  keys
    .command('jwks')
    .description('print the verify keys as a JWKS (kid = RFC 7638 thumbprint, key_id = sha256 of the raw key)')
    .option('--out <file>', 'write the JWKS to a file instead of stdout')
    .option('--state-dir <dir>', STATE_DIR_HELP)
    .action((flags: KeysFlags & { out?: string }) => {
      const dir = stateDir(ctx, flags.stateDir);
      const ring = loadKeyRing(dir);
      if (ring.length === 0) {
        throw new WardError(ERROR_CODES.KEY_MISSING, `no keys in ${defaultKeyPaths(dir).dir}`, { hint: 'run ward keys init' });
      }
      const text = JSON.stringify(buildJwks(ring), null, 2) + '\n';
      if (flags.out) writeFileAtomic(resolve(ctx.cwd, flags.out), text, 0o644);
      else ctx.stdout(text);
      ctx.exitCode = EXIT.OK;
    });
}

function report(ctx: CliContext, flags: KeysFlags, fields: Record<string, unknown>, text: string): void {
  if (flags.json) ctx.stdout(goJsonLine({ ok: true, correlation_id: correlationId(ctx.argv), ...fields }) + '\n');
  else ctx.stdout(text + '\n');
  ctx.exitCode = EXIT.OK;
}
