import { existsSync, realpathSync } from 'node:fs';
import { userInfo } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stateDirForApprovalDir } from '../state/state-dir.js';

/**
 * The `ward approve` command Ward prints when a call needs approval — by `gate eval`, the MCP
 * proxy and the SDK alike. It must work verbatim when pasted into a shell anywhere: it names the
 * way to run this very Ward (`ward` only when that is on PATH and is this installation, else
 * `node /abs/path/bin/ward.js`), signs with the key the gate verifies with (the absolute state
 * directory, or the explicit key file) and writes the token to an absolute path.
 */
export interface ApprovalCommandInput {
  intentDigest: string;
  policyDigest: string;
  /** Scopes the token must hold (`requiredApprovalScope`). */
  scope: readonly string[];
  /** The intent's delegation digest, when it carries delegation. */
  delegationBindingDigest?: string | undefined;
  /**
   * The call's digest (`approvalCallOf`), when the policy lets an approval bind the call rather
   * than the session: the token then also grants the same call from a new session.
   */
  callDigest?: string | undefined;
  /** What signs the token: the gate's default key in a state directory, or its explicit key. */
  signer: ApprovalSigner;
  /** Where the token is written (made absolute against `process.cwd()`). */
  out: string;
  /** Default `1h`. */
  ttl?: string;
  /** Default: the operating-system user running Ward. */
  approver?: string;
  /** Default `manual_approval`. */
  reasonCode?: string;
  /** How to run Ward; default `wardCommand()`. */
  ward?: string;
}

/**
 * What signs the token. `approverKey`: tokens verify only with keys configured for approvers
 * (`--approval-public-key`, `--approval-jwks`), so each approver fills in their own key file.
 */
export type ApprovalSigner = { stateDir: string } | { privateKeyPath: string } | { privateKeyEnv: string } | { approverKey: true };

export function approvalCommand(input: ApprovalCommandInput): string {
  const args = ['approve', '--intent-digest', input.intentDigest, '--policy-digest', input.policyDigest];
  if (input.delegationBindingDigest) args.push('--delegation-binding-digest', input.delegationBindingDigest);
  if (input.callDigest) args.push('--call-digest', input.callDigest);
  args.push('--scope', input.scope.join(','), '--ttl', input.ttl ?? '1h');
  args.push('--approver', input.approver ?? defaultApprover(), '--reason-code', input.reasonCode ?? 'manual_approval');
  const s = input.signer;
  if ('stateDir' in s) args.push('--state-dir', resolve(s.stateDir));
  else if ('privateKeyPath' in s) args.push('--private-key', resolve(s.privateKeyPath));
  else if ('privateKeyEnv' in s) args.push('--private-key-env', s.privateKeyEnv);
  args.push('--out', resolve(input.out));
  const placeholder = 'approverKey' in s ? ' --private-key <approver-private-key>' : '';
  return `${input.ward ?? wardCommand()} ${args.map(shellQuote).join(' ')}${placeholder}`;
}

/** The conventional token file for an intent in an approval directory (`<state>/approvals`). */
/**
 * What a token made by the approve command lets the agent retry, in words for the reply: exactly
 * this call (tool, arguments, targets, under this policy), once, and whether from a new session.
 */
export function approvalRetryNote(toolName: string, callBound: boolean): string {
  return (
    `The token lets exactly this call run once: tool ${toolName} with the same arguments and targets, under the same policy` +
    (callBound ? ', from this session or a new one (the session and run ids are not bound).' : ', from this session only (the policy binds approvals to the session).') +
    ' Any change to the call needs a new approval.'
  );
}

export function approvalTokenPath(approvalDir: string, intentDigest: string): string {
  return join(resolve(approvalDir), `approval_${intentDigest.slice(0, 16)}.json`);
}

/** POSIX shell quoting, only when needed. */
export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_./:=,@%+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** This package's CLI entry point (`bin/ward.js`), from dist/runtime or src/runtime alike. */
export const WARD_BIN = fileURLToPath(new URL('../../bin/ward.js', import.meta.url));

let cached: { key: string; command: string } | undefined;

/**
 * How to run this Ward from any shell: `ward` when a `ward` on PATH is this installation (its
 * real path is this package's `bin/ward.js`, as after `npm link` or a global install); otherwise
 * `node <absolute bin/ward.js>`, with `node` spelled as the absolute path of the running Node
 * when the `node` on PATH is another one. Never `npx ward`, which may fetch a package from the
 * registry. A `ward` that only npm's own PATH for this process finds does not count.
 */
export function wardCommand(env: NodeJS.ProcessEnv = process.env, bin: string = WARD_BIN, execPath: string = process.execPath): string {
  const key = `${env['PATH'] ?? ''}\0${bin}\0${execPath}`;
  if (cached?.key === key) return cached.command;
  const realBin = real(bin);
  let command: string;
  if (!pathSetByNpm(env) && onPath('ward', env) === realBin) command = 'ward';
  else command = `${nodeCommand(env, execPath)} ${shellQuote(realBin)}`;
  cached = { key, command };
  return command;
}

/** `node` when the node on PATH is the one running; otherwise the running Node's absolute path. */
export function nodeCommand(env: NodeJS.ProcessEnv = process.env, execPath: string = process.execPath): string {
  return onPath('node', env) === real(execPath) ? 'node' : shellQuote(execPath);
}

/**
 * `npx ward`, `npm exec` and `npm run` put the project's node_modules/.bin on PATH for that one
 * process: a `ward` found there is not on PATH in the shell the user pastes the command into.
 */
function pathSetByNpm(env: NodeJS.ProcessEnv): boolean {
  return env['npm_command'] === 'exec' || env['npm_lifecycle_event'] !== undefined;
}

/** The real path of the first `name` on PATH, if any. */
function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (existsSync(candidate)) return real(candidate);
  }
  return undefined;
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

function defaultApprover(): string {
  try {
    const name = userInfo().username;
    if (name) return name;
  } catch {
    // no passwd entry (some containers)
  }
  return 'operator';
}

const signers = new Map<string, ApprovalSigner>();

/**
 * Record how approvals for the state directory `stateDir` must be signed in this process: the
 * CLI does, from the command's key flags (`--private-key`, `--approval-public-key`, …), so a host
 * that only knows its approval directory (the MCP proxy) prints the right key in its command.
 */
export function rememberApprovalSigner(stateDir: string, signer: ApprovalSigner): void {
  signers.set(resolve(stateDir), signer);
}

/** The signer for approvals dropped into `approvalDir`: its state directory's key unless recorded otherwise. */
export function approvalSignerFor(approvalDir: string): ApprovalSigner {
  const state = stateDirForApprovalDir(approvalDir);
  return signers.get(resolve(state)) ?? { stateDir: state };
}
