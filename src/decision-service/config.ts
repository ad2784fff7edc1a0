import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ContextEnvelope } from '../context/index.js';
import { envelopeOf } from '../decision/inputs.js';
import { ERROR_CODES, WardError } from '../errors.js';
import { checkProfileKeyFlags, keyModeFlag, signingKeyFromKeyFlags } from '../keys/index.js';
import { loadPolicyFile } from '../policy/load.js';
import { normalizeAdapter } from './adapters.js';
import { checkedLocalPath, type DecisionServiceConfig } from './evaluate.js';
import type { Profile } from './intent.js';

/** The flags `mcp proxy --call`, `mcp serve` and `hook <host>` share. */
export interface ServiceOptions {
  policy?: string | undefined;
  contextEnvelope?: string | undefined;
  adapter?: string | undefined;
  profile?: string | undefined;
  jobRoot?: string | undefined;
  killSwitchState?: string | undefined;
  exportLogOut?: string | undefined;
  exportOtelOut?: string | undefined;
  keyMode?: string | undefined;
  privateKey?: string | undefined;
  privateKeyEnv?: string | undefined;
  /** Resolved state directory. */
  stateDir: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  serve: boolean;
  allowClientArtifactPaths?: boolean | undefined;
  traceDir?: string | undefined;
  runpackDir?: string | undefined;
  packDir?: string | undefined;
}

/** The command-line flags every decision-service command shares, named as commander names them. */
const SHARED_FLAGS = [
  'policy',
  'contextEnvelope',
  'adapter',
  'profile',
  'jobRoot',
  'killSwitchState',
  'exportLogOut',
  'exportOtelOut',
  'keyMode',
  'privateKey',
  'privateKeyEnv',
] as const;

export type SharedServiceFlags = Partial<Pick<ServiceOptions, (typeof SHARED_FLAGS)[number]>>;

/** The shared flags out of a command's parsed flags (`mcp proxy --call`, `mcp serve`, `hook <host>`). */
export function sharedServiceFlags(flags: SharedServiceFlags): SharedServiceFlags {
  const out: SharedServiceFlags = {};
  for (const key of SHARED_FLAGS) if (flags[key] !== undefined) out[key] = flags[key];
  return out;
}

/**
 * Validate flags and load everything a decision needs once: the policy, the boundary context
 * envelope (verified now: a bad envelope stops startup), and the signing key. §6.3 step 3's
 * profile rules: oss-prod needs `--key-mode prod` and refuses `default_verdict: allow`.
 */
export function loadServiceConfig(opts: ServiceOptions): DecisionServiceConfig {
  if (!opts.policy || opts.policy.trim() === '') {
    throw new WardError(ERROR_CODES.USAGE, 'missing required --policy', { hint: 'pass --policy policy.yaml' });
  }
  const profile = (opts.profile ?? 'standard').trim().toLowerCase() || 'standard';
  if (profile !== 'standard' && profile !== 'oss-prod') {
    throw new WardError(ERROR_CODES.USAGE, `unsupported --profile ${profile}`, { hint: 'use --profile standard or --profile oss-prod' });
  }
  keyModeFlag(opts.keyMode);
  checkProfileKeyFlags(profile, opts, 'service');
  const defaultAdapter = normalizeAdapter(opts.adapter);
  const policy = loadPolicyFile(resolve(opts.cwd, opts.policy));
  if (profile === 'oss-prod' && policy.policy.default_verdict === 'allow') {
    throw new WardError(ERROR_CODES.POLICY_PROFILE, 'oss-prod profile rejects policy default_verdict=allow', {
      hint: 'use default_verdict: block or require_approval',
    });
  }
  const envelope = opts.contextEnvelope ? readEnvelopeFile(opts.cwd, opts.contextEnvelope) : undefined;
  const key = signingKeyFromKeyFlags(opts, opts);
  return {
    policy,
    signingKey: key.key,
    keyWarnings: key.warnings,
    profile: profile as Profile,
    defaultAdapter,
    contextEnvelope: envelope,
    allowClientArtifactPaths: opts.allowClientArtifactPaths === true,
    serve: opts.serve,
    killSwitchStatePath: opts.killSwitchState || undefined,
    jobRoot: opts.jobRoot || resolve(opts.stateDir, 'jobs'),
    exportLogOut: opts.exportLogOut || undefined,
    exportOtelOut: opts.exportOtelOut || undefined,
    cwd: opts.cwd,
    stateDir: opts.stateDir,
    traceDir: opts.traceDir || resolve(opts.stateDir, 'traces'),
    runpackDir: opts.runpackDir || undefined,
    packDir: opts.packDir || undefined,
    // The hook and `mcp call` run beside the tool; `mcp serve` may decide for other machines.
    pathResolution: opts.serve ? 'lexical' : 'filesystem',
  };
}

/** §6.6: a local path (absolute, or relative without `..`), parsed strictly and verified. */
function readEnvelopeFile(cwd: string, path: string): ContextEnvelope {
  checkedLocalPath(path, 'context envelope path');
  let text: string;
  try {
    text = readFileSync(resolve(cwd, path), 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new WardError(ERROR_CODES.USAGE, `read context envelope ${path}: ${code === 'ENOENT' ? 'no such file' : (err as Error).message}`, {
      hint: 'check the path given for --context-envelope',
    });
  }
  return envelopeOf(text, path).envelope;
}
