import { canonicalTarget } from '../intent/canonical.js';
import { argsDigest, intentDigestPayload } from '../intent/digest.js';
import { withDiscoveredTargets } from '../intent/discover.js';
import type { NormalizedIntent, Target } from '../intent/types.js';
import type { SigningKey, VerifyKey } from '../keys/index.js';
import { TokenInvalidError } from './decode.js';
import {
  decodeTokenHeader,
  mintTokenHeader,
  normalizeToken,
  openToken,
  signToken,
  tokenHeaderJson,
  tokenKind,
  type TokenKind,
} from './kind.js';
import { addDuration, compareTime, formatRFC3339Nano, goLower, goTrim, isSha256Hex, isZeroTime, jcs, sha256Hex, shortId, uniqueSortedLower, type GoTime, type JsonObject, type JsonValue } from '../canon/index.js';

export const APPROVAL_TOKEN_SCHEMA_ID = 'gait.gate.approval_token';
export const APPROVAL_TOKEN_SCHEMA_VERSION = '1.0.0';

/**
 * The longest lifetime Ward accepts for an approval token: 24 hours. An approval is for a change
 * someone is about to make, not a standing grant (the approved-script registry is for those).
 * Minting refuses a longer `--ttl`; validation refuses a token whose `expires_at` is more than this
 * after its `created_at`, or more than this (plus `APPROVAL_CLOCK_SKEW_NS`) after now: a
 * `created_at` in the future cannot stretch a token's life.
 */
export const MAX_APPROVAL_TOKEN_TTL_NS = 24n * 3_600_000_000_000n;
export const MAX_APPROVAL_TOKEN_TTL_TEXT = '24h';
/** Clock skew tolerated between the approver's machine and the gate's (5 minutes). */
export const APPROVAL_CLOCK_SKEW_NS = 5n * 60_000_000_000n;

/** A normalized `gait.gate.approval_token` (`gate.md` §7.1). Times keep their offsets. */
export interface ApprovalToken {
  schema_id: string;
  schema_version: string;
  created_at: GoTime;
  producer_version: string;
  token_id: string;
  approver_identity: string;
  reason_code: string;
  intent_digest: string;
  policy_digest: string;
  delegation_binding_digest: string;
  scope: string[];
  max_targets: number;
  max_ops: number;
  expires_at: GoTime;
  /**
   * Ward extension (docs/approvals.md "What a token names"), "" / [] when absent: the call the
   * approver was shown — tool, canonical targets (`approvalCallOf`), argument digest — and the
   * reason they typed. Signed with the rest; a token that names a call verifies only for it.
   */
  tool_name: string;
  targets: string[];
  args_digest: string;
  reason: string;
  /**
   * Ward extension: `callDigest` of the approved call (the intent without its session's run,
   * session and request ids). A token with one grants the same call from another session, unless
   * the policy binds approvals to the session (docs/approvals.md "Call or session").
   */
  call_digest: string;
  signature: JsonValue | undefined;
}

/** The longest approver's reason a token carries (characters). */
export const MAX_APPROVAL_REASON = 500;

export type ApprovalErrorCode =
  | 'approval_token_invalid'
  | 'approval_token_signature_missing'
  | 'approval_token_signature_invalid'
  | 'approval_token_intent_mismatch'
  | 'approval_token_policy_mismatch'
  | 'approval_token_delegation_binding_mismatch'
  | 'approval_token_expired'
  | 'approval_token_ttl_exceeded'
  | 'approval_token_consumed'
  | 'approval_token_scope_mismatch'
  | 'approval_token_max_targets_exceeded'
  | 'approval_token_max_ops_exceeded';

/** The signed payload: the normalized token without `signature`, rendered as Go marshals it. */
export function approvalTokenPayload(token: ApprovalToken): JsonObject {
  const out: JsonObject = {
    ...tokenHeaderJson(token),
    token_id: token.token_id,
    approver_identity: token.approver_identity,
    reason_code: token.reason_code,
    intent_digest: token.intent_digest,
    policy_digest: token.policy_digest,
  };
  if (token.delegation_binding_digest) out['delegation_binding_digest'] = token.delegation_binding_digest;
  out['scope'] = [...token.scope];
  if (token.max_targets) out['max_targets'] = token.max_targets;
  if (token.max_ops) out['max_ops'] = token.max_ops;
  out['expires_at'] = formatRFC3339Nano(token.expires_at);
  // Ward's extensions, only when set: a reference token's payload is unchanged.
  if (token.tool_name) out['tool_name'] = token.tool_name;
  if (token.targets.length) out['targets'] = [...token.targets];
  if (token.args_digest) out['args_digest'] = token.args_digest;
  if (token.call_digest) out['call_digest'] = token.call_digest;
  if (token.reason) out['reason'] = token.reason;
  return out;
}

const APPROVAL: TokenKind<ApprovalToken> = tokenKind<ApprovalToken>({
  what: 'approval token',
  schemaId: APPROVAL_TOKEN_SCHEMA_ID,
  schemaVersion: APPROVAL_TOKEN_SCHEMA_VERSION,
  decode: (obj, f) => ({
    ...decodeTokenHeader(obj, f),
    token_id: goTrim(f.string(obj, 'token_id')),
    approver_identity: goTrim(f.string(obj, 'approver_identity')),
    reason_code: goTrim(f.string(obj, 'reason_code')),
    intent_digest: goLower(goTrim(f.string(obj, 'intent_digest'))),
    policy_digest: goLower(goTrim(f.string(obj, 'policy_digest'))),
    delegation_binding_digest: goLower(goTrim(f.string(obj, 'delegation_binding_digest'))),
    scope: uniqueSortedLower(f.strings(obj, 'scope')),
    max_targets: f.int(obj, 'max_targets'),
    max_ops: f.int(obj, 'max_ops'),
    expires_at: f.time(obj, 'expires_at'),
    tool_name: goTrim(f.string(obj, 'tool_name')),
    targets: f.strings(obj, 'targets'),
    args_digest: goLower(goTrim(f.string(obj, 'args_digest'))),
    reason: goTrim(f.string(obj, 'reason')),
    call_digest: goLower(goTrim(f.string(obj, 'call_digest'))),
    signature: obj['signature'] ?? undefined,
  }),
  problem: (token) => {
    if (!token.token_id) return 'token_id is required';
    if (!token.approver_identity) return 'approver_identity is required';
    if (!token.reason_code) return 'reason_code is required';
    if (!isSha256Hex(token.intent_digest)) return 'intent_digest must be sha256 hex';
    if (!isSha256Hex(token.policy_digest)) return 'policy_digest must be sha256 hex';
    if (token.delegation_binding_digest && !isSha256Hex(token.delegation_binding_digest)) return 'delegation_binding_digest must be sha256 hex';
    if (token.scope.length === 0) return 'scope is required';
    if (token.max_targets < 0 || token.max_ops < 0) return 'max_targets and max_ops must be >= 0';
    if (isZeroTime(token.created_at) || isZeroTime(token.expires_at)) return 'created_at and expires_at are required';
    return extensionProblem(token);
  },
  payload: approvalTokenPayload,
});

/** The rules of Ward's extension fields: a token names a whole call or none. */
function extensionProblem(token: ApprovalToken): string | undefined {
  const named = token.tool_name !== '' || token.targets.length > 0 || token.args_digest !== '';
  if (named && (!token.tool_name || !isSha256Hex(token.args_digest))) return 'tool_name and args_digest (sha256 hex) name the approved call together';
  if (token.call_digest && !isSha256Hex(token.call_digest)) return 'call_digest must be sha256 hex';
  if (token.targets.some((t) => t === '')) return 'targets must not hold empty strings';
  if (token.reason.length > MAX_APPROVAL_REASON || /[\0-\x1f\x7f]/.test(token.reason)) return `reason must be at most ${MAX_APPROVAL_REASON} characters without control characters`;
  return undefined;
}

const CODES = {
  invalid: 'approval_token_invalid',
  signatureMissing: 'approval_token_signature_missing',
  signatureInvalid: 'approval_token_signature_invalid',
} as const;

/** Normalize a decoded token; throws `TokenInvalidError` for anything §7.1 step 1 rejects. */
export function normalizeApprovalToken(value: JsonValue): ApprovalToken {
  return normalizeToken(APPROVAL, value);
}

export interface MintApprovalOptions {
  intentDigest: string;
  policyDigest: string;
  delegationBindingDigest?: string | undefined;
  /** Time to live in nanoseconds (see `parseGoDuration`); must be > 0. */
  ttlNs: bigint;
  scope: readonly string[];
  approver: string;
  reasonCode: string;
  maxTargets?: number | undefined;
  maxOps?: number | undefined;
  /** Name the approved call in the token (Ward extension): it then verifies only for that call. */
  call?: ApprovalCall | undefined;
  /** Bind the call, not the session: `callDigest` of the approved call (docs/approvals.md "Call or session"). */
  callDigest?: string | undefined;
  /** The approver's own words (Ward extension). */
  reason?: string | undefined;
  now: GoTime;
  producerVersion: string;
  key: SigningKey;
}

/** Mint a signed approval token (`ward approve`). */
export function mintApprovalToken(opts: MintApprovalOptions): JsonObject {
  const header = mintTokenHeader(APPROVAL, opts.now, opts.producerVersion);
  const expiresAt = addDuration(header.created_at, opts.ttlNs);
  const scope = uniqueSortedLower(opts.scope);
  const maxTargets = opts.maxTargets ?? 0;
  const maxOps = opts.maxOps ?? 0;
  const intentDigest = goLower(goTrim(opts.intentDigest));
  const policyDigest = goLower(goTrim(opts.policyDigest));
  const delegationBindingDigest = goLower(goTrim(opts.delegationBindingDigest ?? ''));
  const approver = goTrim(opts.approver);
  const reasonCode = goTrim(opts.reasonCode);
  if (!isSha256Hex(intentDigest)) throw new TokenInvalidError('intent digest must be sha256 hex');
  if (!isSha256Hex(policyDigest)) throw new TokenInvalidError('policy digest must be sha256 hex');
  if (delegationBindingDigest && !isSha256Hex(delegationBindingDigest)) {
    throw new TokenInvalidError('delegation binding digest must be sha256 hex');
  }
  if (opts.ttlNs <= 0n) throw new TokenInvalidError('ttl must be > 0');
  if (opts.ttlNs > MAX_APPROVAL_TOKEN_TTL_NS) {
    throw new TokenInvalidError(`ttl must be at most ${MAX_APPROVAL_TOKEN_TTL_TEXT} (approval tokens are one-use and short-lived)`);
  }
  if (scope.length === 0) throw new TokenInvalidError('scope is required');
  if (!approver) throw new TokenInvalidError('approver is required');
  if (!reasonCode) throw new TokenInvalidError('reason code is required');
  if (!Number.isSafeInteger(maxTargets) || maxTargets < 0 || !Number.isSafeInteger(maxOps) || maxOps < 0) {
    throw new TokenInvalidError('max targets and max ops must be integers >= 0');
  }
  const tokenId = shortId(
    [intentDigest, policyDigest, approver, reasonCode, scope.join(','), maxTargets, maxOps, formatRFC3339Nano(expiresAt)].join(':'),
  );
  return signToken(
    APPROVAL,
    {
      ...header,
      token_id: tokenId,
      approver_identity: approver,
      reason_code: reasonCode,
      intent_digest: intentDigest,
      policy_digest: policyDigest,
      delegation_binding_digest: delegationBindingDigest,
      scope,
      max_targets: maxTargets,
      max_ops: maxOps,
      expires_at: expiresAt,
      ...callFields(opts.call, opts.callDigest ?? '', opts.reason ?? ''),
      signature: undefined,
    },
    opts.key,
  );
}

/** The extension members: the call a token names (or none), the call digest it binds (or ""), the approver's reason. */
export function callFields(call: ApprovalCall | undefined, callDigest: string, reason: string): Pick<ApprovalToken, 'tool_name' | 'targets' | 'args_digest' | 'call_digest' | 'reason'> {
  const r = goTrim(reason);
  if (r.length > MAX_APPROVAL_REASON || /[\0-\x1f\x7f]/.test(r)) throw new TokenInvalidError(`reason must be at most ${MAX_APPROVAL_REASON} characters without control characters`);
  const digest = goLower(goTrim(callDigest));
  if (digest && !isSha256Hex(digest)) throw new TokenInvalidError('call digest must be sha256 hex');
  if (call && digest && digest !== call.callDigest) throw new TokenInvalidError('the call digest is not the named call\'s');
  return { tool_name: call?.toolName ?? '', targets: call ? [...call.targets] : [], args_digest: call?.argsDigest ?? '', call_digest: digest, reason: r };
}

/** What an approval must bind to, from the gate's prepared intent and policy. */
export interface ApprovalBinding {
  verifyKeys: readonly VerifyKey[];
  intentDigest: string;
  policyDigest: string;
  /** The intent's delegation digest; set exactly when the intent carries `delegation`. */
  delegationDigest?: string | undefined;
  requiredScope: readonly string[];
  targetCount: number;
  opCount: number;
  /**
   * The call being decided (`approvalCallOf` of the prepared intent). Every gate decision gives
   * it; only an offline check of a token's signature and digests (`ward approve verify` without an
   * intent) may not, and then a token's call fields are not compared.
   */
  call?: ApprovalCall | undefined;
  /**
   * The call digest being decided, when `call` is not given (`ward approve verify --call-digest`):
   * a token's `call_digest` may stand in for the intent digest; its named call is not compared.
   */
  callDigest?: string | undefined;
  /** The policy binds approvals to the session: a token's `call_digest` does not stand in for the intent digest. */
  sessionBound?: boolean | undefined;
  /** The wall clock (README decision 10): never `--evaluation-time`. */
  now: GoTime;
}

export type ApprovalValidation =
  /** `keyId`: the key that verified the signature. */
  | { ok: true; token: ApprovalToken; keyId: string }
  | { ok: false; code: ApprovalErrorCode; message: string; token: ApprovalToken | undefined };

/**
 * `ValidateApprovalToken`: the checks of §7.1 in their exact order; the first failure wins. Ward
 * adds `approval_token_ttl_exceeded` right after the expiry check (step 7): a lifetime longer than
 * `MAX_APPROVAL_TOKEN_TTL_NS`. Whether the token was already used is the ledger's question
 * (`approval_token_consumed`, in the gate's approval step), asked only of tokens valid here.
 */
export function validateApprovalToken(value: JsonValue, binding: ApprovalBinding): ApprovalValidation {
  const opened = openToken(APPROVAL, value, binding.verifyKeys, CODES);
  if (!opened.ok) return opened;
  const { token, keyId } = opened;
  const fail = (code: ApprovalErrorCode, message: string): ApprovalValidation => ({ ok: false, code, message, token });
  if (token.intent_digest !== binding.intentDigest && !sameCall(token, binding)) return fail('approval_token_intent_mismatch', 'intent digest mismatch');
  const named = namedCallProblem(token, binding.call);
  if (named) return fail('approval_token_intent_mismatch', named);
  if (token.policy_digest !== binding.policyDigest) return fail('approval_token_policy_mismatch', 'policy digest mismatch');
  if (binding.delegationDigest !== undefined && token.delegation_binding_digest !== binding.delegationDigest) {
    return fail('approval_token_delegation_binding_mismatch', 'delegation binding digest mismatch');
  }
  if (compareTime(binding.now, token.expires_at) >= 0) return fail('approval_token_expired', 'approval token expired');
  if (
    compareTime(token.expires_at, addDuration(token.created_at, MAX_APPROVAL_TOKEN_TTL_NS)) > 0 ||
    compareTime(token.expires_at, addDuration(binding.now, MAX_APPROVAL_TOKEN_TTL_NS + APPROVAL_CLOCK_SKEW_NS)) > 0
  ) {
    return fail('approval_token_ttl_exceeded', `approval token lifetime exceeds ${MAX_APPROVAL_TOKEN_TTL_TEXT}`);
  }
  if (!token.scope.includes('*') && !binding.requiredScope.every((scope) => token.scope.includes(scope))) {
    return fail('approval_token_scope_mismatch', `approval scope must include ${binding.requiredScope.join(',')}`);
  }
  if (token.max_targets > 0 && binding.targetCount > token.max_targets) {
    return fail('approval_token_max_targets_exceeded', `target count ${binding.targetCount} exceeds max_targets ${token.max_targets}`);
  }
  if (token.max_ops > 0 && binding.opCount > token.max_ops) {
    return fail('approval_token_max_ops_exceeded', `op count ${binding.opCount} exceeds max_ops ${token.max_ops}`);
  }
  return { ok: true, token, keyId };
}

/**
 * A token bound to the call (`call_digest`) grants the same call from another session: the same
 * tool, arguments, targets and context except the run, session and request ids. Not when the
 * policy binds approvals to the session.
 */
function sameCall(token: ApprovalToken, binding: ApprovalBinding): boolean {
  const callDigest = binding.call?.callDigest ?? binding.callDigest;
  return token.call_digest !== '' && callDigest !== undefined && binding.sessionBound !== true && token.call_digest === callDigest;
}

/** Why a token that names a call does not name this one (undefined: it does, or it names none). */
function namedCallProblem(token: ApprovalToken, call: ApprovalCall | undefined): string | undefined {
  if (!token.tool_name || !call) return undefined;
  if (token.tool_name !== call.toolName) return `the token names tool ${token.tool_name}, the call is ${call.toolName}`;
  if (token.args_digest !== call.argsDigest) return 'the token names other arguments (args_digest differs)';
  if (jcs(token.targets) !== jcs(call.targets)) return `the token names targets ${JSON.stringify(token.targets)}, the call's are ${JSON.stringify(call.targets)}`;
  return undefined;
}

/** What an approval token can name about a call (Ward extension): derived from the prepared intent only. */
export interface ApprovalCall {
  toolName: string;
  argsDigest: string;
  /** `kind:canonical value (operation)` for each target the gate checks (`checkedTargets`), in order. */
  targets: string[];
  /** sha256(JCS(the intent digest payload without the context's run_id, session_id and request_id)). */
  callDigest: string;
}

/** Context fields that name a session or a request, not the call: outside `callDigest`. */
export const SESSION_CONTEXT_FIELDS = ['run_id', 'session_id', 'request_id'] as const;

const calls = new WeakMap<NormalizedIntent, ApprovalCall>();

/**
 * The call as a token names and binds it. Memoized per intent object: one decision asks up to
 * three times (the approval directory, the denial check, the token step), each ~2 intent digests.
 */
export function approvalCallOf(intent: NormalizedIntent): ApprovalCall {
  const hit = calls.get(intent);
  if (hit) return hit;
  const call = computeApprovalCall(intent);
  calls.set(intent, call);
  return call;
}

function computeApprovalCall(intent: NormalizedIntent): ApprovalCall {
  const workspace = intent.context.workspace;
  const all = checkedTargets(intent);
  const payload = intentDigestPayload(intent);
  const context = { ...(payload['context'] as JsonObject) };
  for (const k of SESSION_CONTEXT_FIELDS) delete context[k];
  return {
    toolName: intent.tool_name,
    argsDigest: argsDigest(intent),
    targets: all.map((t) => approvalTargetText(t.kind, canonicalTarget(t, workspace).value ?? t.value, t.operation)),
    callDigest: sha256Hex(jcs({ ...payload, context })),
  };
}

/**
 * Every target the gate checks for this intent: the declared ones plus those its arguments show
 * (intent/discover.ts), script steps' included, in order — what an approver must see. Digests
 * cover the declared ones only, as the reference's do.
 */
export function checkedTargets(intent: NormalizedIntent): Target[] {
  const checked = withDiscoveredTargets(intent);
  return [...checked.targets, ...(checked.script?.steps.flatMap((s) => s.targets) ?? [])];
}

/** One target as a token names it (the console shows the same three parts). */
export function approvalTargetText(kind: string, canonical: string, operation: string): string {
  return `${kind}:${canonical}${operation ? ` (${operation})` : ''}`;
}

/** `tool:<tool_name>`, plus `phase:apply` and `destructive:apply` for a destructive apply. */
export function requiredApprovalScope(intent: NormalizedIntent): string[] {
  const scope = [`tool:${intent.tool_name}`];
  if (intent.context.phase === 'apply' && intent.targets.some((target) => target.destructive)) {
    scope.push('phase:apply', 'destructive:apply');
  }
  return scope;
}

/** Targets an approval covers: the sum of step targets for scripts, else the top-level targets. */
export function approvalTargetCount(intent: NormalizedIntent): number {
  if (!intent.script) return intent.targets.length;
  return intent.script.steps.reduce((sum, step) => sum + step.targets.length, 0);
}

/** Operations an approval covers: the step count for scripts, else max(1, targets). */
export function approvalOpCount(intent: NormalizedIntent): number {
  return intent.script ? intent.script.steps.length : Math.max(1, intent.targets.length);
}
