import type { NormalizedIntent } from '../intent/types.js';
import type { SigningKey, VerifyKey } from '../keys/index.js';
import { TokenInvalidError } from './decode.js';
import {
  checkTokenSignature,
  decodeTokenHeader,
  mintTokenHeader,
  normalizeToken,
  openToken,
  signToken,
  tokenHeaderJson,
  tokenKind,
  type TokenKind,
} from './kind.js';
import { addDuration, compareTime, formatRFC3339Nano, goLower, goTrim, isSha256Hex, isZeroTime, shortId, uniqueSortedLower, type GoTime, type JsonObject, type JsonValue } from '../canon/index.js';

export const DELEGATION_TOKEN_SCHEMA_ID = 'gait.gate.delegation_token';
export const DELEGATION_TOKEN_SCHEMA_VERSION = '1.0.0';

/** A normalized `gait.gate.delegation_token` (`gate.md` §7.2). */
export interface DelegationToken {
  schema_id: string;
  schema_version: string;
  created_at: GoTime;
  producer_version: string;
  token_id: string;
  delegator_identity: string;
  delegate_identity: string;
  scope: string[];
  scope_class: string;
  intent_digest: string;
  policy_digest: string;
  expires_at: GoTime;
  signature: JsonValue | undefined;
}

export type DelegationErrorCode =
  | 'delegation_token_missing'
  | 'delegation_token_invalid'
  | 'delegation_token_signature_missing'
  | 'delegation_token_signature_invalid'
  | 'delegation_token_expired'
  | 'delegation_token_delegator_mismatch'
  | 'delegation_token_delegate_mismatch'
  | 'delegation_token_intent_mismatch'
  | 'delegation_token_policy_mismatch'
  | 'delegation_token_scope_mismatch'
  | 'delegation_token_chain_mismatch';

export function delegationTokenPayload(token: DelegationToken): JsonObject {
  const out: JsonObject = {
    ...tokenHeaderJson(token),
    token_id: token.token_id,
    delegator_identity: token.delegator_identity,
    delegate_identity: token.delegate_identity,
    scope: [...token.scope],
  };
  if (token.scope_class) out['scope_class'] = token.scope_class;
  if (token.intent_digest) out['intent_digest'] = token.intent_digest;
  if (token.policy_digest) out['policy_digest'] = token.policy_digest;
  out['expires_at'] = formatRFC3339Nano(token.expires_at);
  return out;
}

const DELEGATION: TokenKind<DelegationToken> = tokenKind<DelegationToken>({
  what: 'delegation token',
  schemaId: DELEGATION_TOKEN_SCHEMA_ID,
  schemaVersion: DELEGATION_TOKEN_SCHEMA_VERSION,
  decode: (obj, f) => ({
    ...decodeTokenHeader(obj, f),
    token_id: goTrim(f.string(obj, 'token_id')),
    delegator_identity: goTrim(f.string(obj, 'delegator_identity')),
    delegate_identity: goTrim(f.string(obj, 'delegate_identity')),
    scope: uniqueSortedLower(f.strings(obj, 'scope')),
    scope_class: goLower(goTrim(f.string(obj, 'scope_class'))),
    intent_digest: goLower(goTrim(f.string(obj, 'intent_digest'))),
    policy_digest: goLower(goTrim(f.string(obj, 'policy_digest'))),
    expires_at: f.time(obj, 'expires_at'),
    signature: obj['signature'] ?? undefined,
  }),
  problem: (token) => {
    if (!token.token_id) return 'token_id is required';
    if (!token.delegator_identity || !token.delegate_identity) return 'delegator_identity and delegate_identity are required';
    if (token.scope.length === 0) return 'scope is required';
    if (token.intent_digest && !isSha256Hex(token.intent_digest)) return 'intent_digest must be sha256 hex';
    if (token.policy_digest && !isSha256Hex(token.policy_digest)) return 'policy_digest must be sha256 hex';
    if (isZeroTime(token.created_at) || isZeroTime(token.expires_at)) return 'created_at and expires_at are required';
    return undefined;
  },
  payload: delegationTokenPayload,
});

const CODES = {
  invalid: 'delegation_token_invalid',
  signatureMissing: 'delegation_token_signature_missing',
  signatureInvalid: 'delegation_token_signature_invalid',
} as const;

export function normalizeDelegationToken(value: JsonValue): DelegationToken {
  return normalizeToken(DELEGATION, value);
}

export interface MintDelegationOptions {
  delegator: string;
  delegate: string;
  scope: readonly string[];
  scopeClass?: string | undefined;
  intentDigest?: string | undefined;
  policyDigest?: string | undefined;
  ttlNs: bigint;
  now: GoTime;
  producerVersion: string;
  key: SigningKey;
}

/** Mint a signed delegation token (`ward delegate mint`). */
export function mintDelegationToken(opts: MintDelegationOptions): JsonObject {
  const header = mintTokenHeader(DELEGATION, opts.now, opts.producerVersion);
  const expiresAt = addDuration(header.created_at, opts.ttlNs);
  const delegator = goTrim(opts.delegator);
  const delegate = goTrim(opts.delegate);
  const scope = uniqueSortedLower(opts.scope);
  const scopeClass = goLower(goTrim(opts.scopeClass ?? ''));
  const intentDigest = goLower(goTrim(opts.intentDigest ?? ''));
  const policyDigest = goLower(goTrim(opts.policyDigest ?? ''));
  if (!delegator || !delegate) throw new TokenInvalidError('delegator and delegate are required');
  if (scope.length === 0) throw new TokenInvalidError('scope is required');
  if (opts.ttlNs <= 0n) throw new TokenInvalidError('ttl must be > 0');
  if (intentDigest && !isSha256Hex(intentDigest)) throw new TokenInvalidError('intent digest must be sha256 hex');
  if (policyDigest && !isSha256Hex(policyDigest)) throw new TokenInvalidError('policy digest must be sha256 hex');
  const tokenId = shortId(
    [delegator, delegate, scope.join(','), scopeClass, intentDigest, policyDigest, formatRFC3339Nano(expiresAt)].join(':'),
  );
  return signToken(
    DELEGATION,
    {
      ...header,
      token_id: tokenId,
      delegator_identity: delegator,
      delegate_identity: delegate,
      scope,
      scope_class: scopeClass,
      intent_digest: intentDigest,
      policy_digest: policyDigest,
      expires_at: expiresAt,
      signature: undefined,
    },
    opts.key,
  );
}

/** One hop a token must cover. An empty `delegator_identity` is unconstrained (the pseudo-link). */
export interface DelegationLinkRequirement {
  delegator_identity: string;
  delegate_identity: string;
  scope_class: string;
  /**
   * Set on the root hop (the first link, or the pseudo-link) when the policy restricts who may
   * delegate: the token's delegator must be one of these (`delegation_token_delegator_mismatch`).
   */
  allowed_delegators?: readonly string[] | undefined;
}

/**
 * Why an intent's `delegation.chain` is not one chain of authority, or undefined when it is: each
 * hop's delegate must be the next hop's delegator, and the last delegate the requester. Only then
 * is `chain[0].delegator_identity` the root the whole chain derives from, so that an allowed
 * delegator appearing at a later hop cannot lend the chain its authority.
 */
export function delegationChainProblem(intent: NormalizedIntent): string | undefined {
  const delegation = intent.delegation;
  if (!delegation || delegation.chain.length === 0) return undefined;
  const chain = delegation.chain;
  for (let i = 1; i < chain.length; i++) {
    if (chain[i]!.delegator_identity !== chain[i - 1]!.delegate_identity) {
      return `delegation chain is broken at hop ${i}: ${chain[i]!.delegator_identity} is not ${chain[i - 1]!.delegate_identity}`;
    }
  }
  const last = chain[chain.length - 1]!;
  if (last.delegate_identity !== delegation.requester_identity) {
    return `delegation chain ends at ${last.delegate_identity}, not the requester ${delegation.requester_identity}`;
  }
  return undefined;
}

/** The identity a delegation chain is rooted at (`chain[0].delegator_identity`); undefined without a chain. */
export function delegationChainRoot(intent: NormalizedIntent): string | undefined {
  return intent.delegation?.chain[0]?.delegator_identity;
}

/**
 * The hops to prove: the intent's `delegation.chain` in order or, without a chain, one pseudo-link
 * to the requester. Without any `delegation` (a policy cannot normally require it then) the
 * calling identity must be the delegate, so the requirement is never vacuous.
 */
export function requiredDelegationLinks(intent: NormalizedIntent): DelegationLinkRequirement[] {
  const delegation = intent.delegation;
  if (delegation && delegation.chain.length > 0) {
    return delegation.chain.map((link) => ({
      delegator_identity: link.delegator_identity,
      delegate_identity: link.delegate_identity,
      scope_class: link.scope_class,
    }));
  }
  return [
    {
      delegator_identity: '',
      delegate_identity: delegation ? delegation.requester_identity : intent.context.identity,
      scope_class: delegation ? delegation.scope_class : '',
    },
  ];
}

export interface DelegationBinding {
  verifyKeys: readonly VerifyKey[];
  /**
   * Who may root the chain (the matched rules' `allowed_delegator_identities`, intersected);
   * undefined when no rule restricts it. Checked on the root hop only.
   */
  allowedRootDelegators?: readonly string[] | undefined;
  intentDigest: string;
  policyDigest: string;
  /** The winning rules' `delegation_scopes`; a token needs any one of them (or `*`). */
  requiredScopes: readonly string[];
  /** The wall clock (README decision 10). */
  now: GoTime;
}

export type DelegationValidation =
  | { ok: true; token: DelegationToken }
  | { ok: false; code: DelegationErrorCode; message: string; token: DelegationToken | undefined };

/** Single-token validation against one link, in the order of §7.2. */
export function validateDelegationToken(
  value: JsonValue,
  link: DelegationLinkRequirement,
  binding: DelegationBinding,
): DelegationValidation {
  const opened = openToken(DELEGATION, value, binding.verifyKeys, CODES);
  return opened.ok ? checkLink(opened.token, link, binding) : opened;
}

/** `validateDelegationToken` for a token normalized earlier (the chain roll-up normalizes once). */
export function validateNormalizedDelegation(
  token: DelegationToken,
  link: DelegationLinkRequirement,
  binding: DelegationBinding,
): DelegationValidation {
  const signed = checkTokenSignature(DELEGATION, token, binding.verifyKeys, CODES);
  return signed.ok ? checkLink(token, link, binding) : signed;
}

/** §7.2 steps 3–6 for a normalized token whose signature verified. */
function checkLink(token: DelegationToken, link: DelegationLinkRequirement, binding: DelegationBinding): DelegationValidation {
  const fail = (code: DelegationErrorCode, message: string): DelegationValidation => ({ ok: false, code, message, token });
  if (compareTime(binding.now, token.expires_at) >= 0) return fail('delegation_token_expired', 'delegation token expired');
  if (link.delegator_identity && token.delegator_identity !== link.delegator_identity) {
    return fail('delegation_token_delegator_mismatch', `delegator ${token.delegator_identity} does not match ${link.delegator_identity}`);
  }
  if (link.allowed_delegators && !link.allowed_delegators.includes(token.delegator_identity)) {
    return fail('delegation_token_delegator_mismatch', `delegator ${token.delegator_identity} may not root the delegation chain`);
  }
  if (token.delegate_identity !== link.delegate_identity) {
    return fail('delegation_token_delegate_mismatch', `delegate ${token.delegate_identity} does not match ${link.delegate_identity}`);
  }
  if (token.intent_digest && token.intent_digest !== binding.intentDigest) return fail('delegation_token_intent_mismatch', 'intent digest mismatch');
  if (token.policy_digest && token.policy_digest !== binding.policyDigest) return fail('delegation_token_policy_mismatch', 'policy digest mismatch');
  if (binding.requiredScopes.length > 0) {
    const held = new Set([...token.scope, token.scope_class]);
    if (!held.has('*') && !binding.requiredScopes.some((scope) => held.has(scope))) {
      return fail('delegation_token_scope_mismatch', `delegation scope must include one of ${binding.requiredScopes.join(',')}`);
    }
  }
  return { ok: true, token };
}
