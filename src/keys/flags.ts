import { ERROR_CODES, WardError } from '../errors.js';
import { KEY_MODES, resolveSigningKey, type KeyMode, type ResolvedSigningKey, type ResolveSigningKeyOptions } from './resolve.js';

/*
 * The signing key a command's flags name, for every host that signs: `gate eval`, the MCP proxy,
 * `ward serve`, the MCP decision service (`mcp call`, `mcp serve`, `hook <host>`) and the
 * minting commands. One mapping, so `--key-mode`, `--private-key` and `--private-key-env` mean
 * the same everywhere:
 *
 * - `--key-mode` is trimmed and lowercased; empty is `default`; anything but default, dev or prod
 *   is a usage error;
 * - a relative `--private-key` is read from the working directory; a path or variable name that is
 *   empty after trimming counts as not given (as the key resolver treats it);
 * - the default key lives in the state directory.
 */

/** The key flags as a command received them (`keyMode` unchecked when its parser has no choices). */
export interface KeyFlags {
  keyMode?: string | undefined;
  privateKey?: string | undefined;
  privateKeyEnv?: string | undefined;
}

/** Where the flags are read: the working directory, the environment, the state directory. */
export interface KeyFlagPlace {
  cwd: string;
  env: NodeJS.ProcessEnv;
  stateDir: string;
}

/** `--key-mode` as given: trimmed, lowercased, `default` when empty; an unknown mode is a usage error. */
export function keyModeFlag(value: string | undefined): KeyMode {
  const mode = (value ?? 'default').trim().toLowerCase() || 'default';
  if (!(KEY_MODES as readonly string[]).includes(mode)) {
    throw new WardError(ERROR_CODES.USAGE, `unsupported --key-mode ${mode}`, { hint: 'use --key-mode default, dev or prod' });
  }
  return mode as KeyMode;
}

/** The resolver's options for these flags (kept by hosts that read the key again on reload). */
export function keyFlagOptions(flags: KeyFlags, place: KeyFlagPlace): ResolveSigningKeyOptions {
  return {
    mode: keyModeFlag(flags.keyMode),
    privateKeyPath: flags.privateKey,
    privateKeyEnv: flags.privateKeyEnv,
    stateDir: place.stateDir,
    env: place.env,
    cwd: place.cwd,
  };
}

export function signingKeyFromKeyFlags(flags: KeyFlags, place: KeyFlagPlace): ResolvedSigningKey {
  return resolveSigningKey(keyFlagOptions(flags, place));
}

/**
 * The `oss-prod` profile's demand on the key flags, in the reference's two forms: `gate eval` and
 * the MCP proxy need `--key-mode prod` and an explicit key (`gate.md` §3.6); the MCP decision
 * service needs `--key-mode prod`, whose own rule then demands the key
 * (`mcp-decision-service.md` §6.3 step 3). Nothing for other profiles.
 */
export function checkProfileKeyFlags(profile: string, flags: KeyFlags, host: 'gate' | 'service'): void {
  if (profile !== 'oss-prod') return;
  const prod = keyModeFlag(flags.keyMode) === 'prod';
  if (host === 'service') {
    if (!prod) {
      throw new WardError(ERROR_CODES.POLICY_PROFILE, 'oss-prod profile requires --key-mode prod', {
        hint: 'add --key-mode prod --private-key KEY (or --private-key-env VAR)',
      });
    }
    return;
  }
  if (!prod || (!flags.privateKey && !flags.privateKeyEnv)) {
    throw new WardError(ERROR_CODES.POLICY_PROFILE, 'oss-prod profile requires --key-mode prod and --private-key or --private-key-env');
  }
}
