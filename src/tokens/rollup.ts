import type { NormalizedIntent } from '../intent/types.js';
import { caselessKey, compareUtf8, formatRFC3339Nano, uniqueSorted, type JsonValue } from '../canon/index.js';
import { validateApprovalToken, type ApprovalBinding, type ApprovalErrorCode } from './approval.js';
import { TokenInvalidError } from './decode.js';
import {
  delegationChainProblem,
  normalizeDelegationToken,
  requiredDelegationLinks,
  validateNormalizedDelegation,
  type DelegationBinding,
  type DelegationErrorCode,
  type DelegationToken,
} from './delegation.js';

/** A token file as read: its JSON, or why it could not be read or parsed. */
export type ParsedToken = { source: string; value: JsonValue } | { source: string; error: string };

/** One examined approval token, as recorded in `approval_audit_<trace_id>.json`. */
export interface ApprovalAuditEntry {
  source: string;
  token_id: string;
  approver_identity: string;
  reason_code: string;
  scope: string[];
  expires_at: string;
  valid: boolean;
  error_code: ApprovalErrorCode | '';
}

export interface ApprovalEvaluationInput extends ApprovalBinding {
  tokens: readonly ParsedToken[];
  /** The winning `min_approvals`; at least one approval is always required. */
  requiredApprovals: number;
  requireDistinct: boolean;
  /**
   * The consumed-token ledger's answer for a token that is otherwise valid: a consumed token is
   * refused with `approval_token_consumed`. Omitted when tokens may be reused until they expire.
   */
  isConsumed?: (tokenId: string) => boolean;
}

export interface ApprovalEvaluation {
  granted: boolean;
  /** Codes to merge into the result: per-token failures plus the outcome code. */
  reasonCodes: string[];
  violations: string[];
  /** Distinct valid token ids in the order examined (`approval_ref` is these comma-joined). */
  validTokenIds: string[];
  /** Distinct approvers of valid tokens (compared case-insensitively; first spelling kept), sorted. */
  approvers: string[];
  /**
   * Distinct approvers that count for `require_distinct_approvers`: approvers paired with distinct
   * signing keys (one key signing for two identities counts once).
   */
  distinctApprovers: number;
  entries: ApprovalAuditEntry[];
  validCount: number;
  requiredApprovals: number;
}

/**
 * The `gate eval` approval step (`gate.md` §3.6 step 8). A token id counts once however many
 * copies are presented: a duplicated file is not a second approval. With
 * `require_distinct_approvers`, approver identities compare case-insensitively and each distinct
 * approver needs a distinct verifying key: the count is the largest set of (approver, key) pairs
 * with no approver and no key used twice.
 */
export function evaluateApprovals(input: ApprovalEvaluationInput): ApprovalEvaluation {
  const required = Math.max(input.requiredApprovals, 1);
  const reasons: string[] = [];
  const entries: ApprovalAuditEntry[] = [];
  const validTokenIds: string[] = [];
  /** Folded identity → first spelling seen. */
  const approvers = new Map<string, string>();
  /** Folded identity → keys that verified a token of that approver. */
  const approverKeys = new Map<string, Set<string>>();
  for (const parsed of input.tokens) {
    if ('error' in parsed) {
      entries.push({ ...emptyApprovalEntry(parsed.source), error_code: 'approval_token_invalid' });
      reasons.push('approval_token_invalid');
      continue;
    }
    const validated = validateApprovalToken(parsed.value, input);
    const result =
      validated.ok && input.isConsumed?.(validated.token.token_id)
        ? ({ ok: false, code: 'approval_token_consumed', message: 'approval token already used', token: validated.token } as const)
        : validated;
    const token = result.token;
    entries.push({
      source: parsed.source,
      token_id: token?.token_id ?? '',
      approver_identity: token?.approver_identity ?? '',
      reason_code: token?.reason_code ?? '',
      scope: token ? [...token.scope] : [],
      expires_at: token ? formatRFC3339Nano(token.expires_at) : '',
      valid: result.ok,
      error_code: result.ok ? '' : result.code,
    });
    if (!result.ok) {
      reasons.push(result.code);
      continue;
    }
    if (!validTokenIds.includes(result.token.token_id)) validTokenIds.push(result.token.token_id);
    // `alice`, `ALICE` and `ａｌｉｃｅ` are one approver.
    const folded = caselessKey(result.token.approver_identity);
    if (!approvers.has(folded)) approvers.set(folded, result.token.approver_identity);
    let keys = approverKeys.get(folded);
    if (!keys) approverKeys.set(folded, (keys = new Set()));
    keys.add(result.keyId);
  }
  const distinctApprovers = maxDistinctPairs(approverKeys);
  const violations: string[] = [];
  let granted = false;
  if (input.tokens.length === 0) {
    reasons.push('approval_token_missing');
    violations.push('approval_not_granted');
  } else if (validTokenIds.length < required) {
    reasons.push('approval_chain_insufficient');
    violations.push('approval_not_granted');
  } else if (input.requireDistinct && required > 1 && distinctApprovers < required) {
    reasons.push('approval_distinct_approvers_required');
    violations.push('approval_not_granted');
  } else {
    granted = true;
    reasons.push('approval_granted');
  }
  return {
    granted,
    reasonCodes: uniqueSorted(reasons),
    violations,
    validTokenIds,
    approvers: uniqueSorted([...approvers.values()]),
    distinctApprovers,
    entries,
    validCount: validTokenIds.length,
    requiredApprovals: required,
  };
}

/**
 * The size of a maximum matching between approvers and the keys that verified their tokens
 * (augmenting paths; the sets are a handful of tokens).
 */
function maxDistinctPairs(approverKeys: ReadonlyMap<string, ReadonlySet<string>>): number {
  const owner = new Map<string, string>();
  const assign = (approver: string, seen: Set<string>): boolean => {
    for (const key of approverKeys.get(approver) ?? []) {
      if (seen.has(key)) continue;
      seen.add(key);
      const holder = owner.get(key);
      if (holder === undefined || assign(holder, seen)) {
        owner.set(key, approver);
        return true;
      }
    }
    return false;
  };
  let count = 0;
  for (const approver of approverKeys.keys()) if (assign(approver, new Set())) count++;
  return count;
}

function emptyApprovalEntry(source: string): ApprovalAuditEntry {
  return { source, token_id: '', approver_identity: '', reason_code: '', scope: [], expires_at: '', valid: false, error_code: '' };
}

/** One chain hop or examined token, as recorded in `delegation_audit_<trace_id>.json`. */
export interface DelegationAuditEntry {
  source: string;
  token_id: string;
  delegator_identity: string;
  delegate_identity: string;
  scope: string[];
  expires_at: string;
  valid: boolean;
  error_code: DelegationErrorCode | '';
}

export interface DelegationEvaluationInput extends DelegationBinding {
  tokens: readonly ParsedToken[];
  intent: NormalizedIntent;
}

export interface DelegationEvaluation {
  granted: boolean;
  reasonCodes: string[];
  violations: string[];
  /** Token ids that proved a hop, in chain order (`delegation_ref` is these comma-joined). */
  validTokenIds: string[];
  entries: DelegationAuditEntry[];
  validCount: number;
  requiredLinks: number;
}

interface Candidate {
  source: string;
  token: DelegationToken | undefined;
  /** Set when the token could not be read or normalized. */
  invalid: string | undefined;
  used: boolean;
  /** Failure code per link index, for leftover reporting. */
  failures: Map<number, DelegationErrorCode>;
}

/**
 * `ValidateDelegationChain` plus the `gate eval` roll-up (`gate.md` §3.6 step 7, §7.2): each link,
 * in order, consumes the first unused token that validates against it. Unmatched links are audit
 * entries with `delegation_token_missing` (not reason codes); each leftover token reports the
 * first failure it had against an unmatched link, else `delegation_token_chain_mismatch`.
 */
export function evaluateDelegations(input: DelegationEvaluationInput): DelegationEvaluation {
  const links = requiredDelegationLinks(input.intent);
  if (input.allowedRootDelegators && links[0]) links[0] = { ...links[0], allowed_delegators: input.allowedRootDelegators };
  // A chain that is not one chain of authority (hops that do not connect, or that end elsewhere
  // than the requester) proves nothing, whatever tokens come with it.
  const broken = delegationChainProblem(input.intent) !== undefined;
  const candidates: Candidate[] = input.tokens.map((parsed) => {
    const base = { source: parsed.source, used: false, failures: new Map<number, DelegationErrorCode>() };
    if ('error' in parsed) return { ...base, token: undefined, invalid: parsed.error };
    try {
      return { ...base, token: normalizeDelegationToken(parsed.value), invalid: undefined };
    } catch (err) {
      if (err instanceof TokenInvalidError) return { ...base, token: undefined, invalid: err.message };
      throw err;
    }
  });

  const entries: DelegationAuditEntry[] = [];
  const validTokenIds: string[] = [];
  const unmatched: number[] = [];
  links.forEach((link, index) => {
    for (const candidate of broken ? [] : candidates) {
      if (candidate.used || !candidate.token) continue;
      const result = validateNormalizedDelegation(candidate.token, link, input);
      if (result.ok) {
        candidate.used = true;
        validTokenIds.push(candidate.token.token_id);
        entries.push(delegationEntry(candidate.source, candidate.token, true, ''));
        return;
      }
      candidate.failures.set(index, result.code);
    }
    unmatched.push(index);
    entries.push({
      source: '',
      token_id: '',
      delegator_identity: link.delegator_identity,
      delegate_identity: link.delegate_identity,
      scope: link.scope_class ? [link.scope_class] : [],
      expires_at: '',
      valid: false,
      error_code: 'delegation_token_missing',
    });
  });

  const tokenFailures: DelegationErrorCode[] = [];
  for (const candidate of candidates) {
    if (candidate.used) continue;
    const code: DelegationErrorCode = candidate.invalid
      ? 'delegation_token_invalid'
      : (unmatched.map((index) => candidate.failures.get(index)).find((failure) => failure !== undefined) ??
        'delegation_token_chain_mismatch');
    tokenFailures.push(code);
    entries.push(delegationEntry(candidate.source, candidate.token, false, code));
  }

  if (broken) tokenFailures.push('delegation_token_chain_mismatch');
  const complete = !broken && validTokenIds.length === links.length;
  const reasons: string[] = [];
  const violations: string[] = [];
  if (input.tokens.length === 0) {
    reasons.push('delegation_token_missing');
    violations.push('delegation_not_granted');
  } else if (!complete) {
    // A link without a valid token counts as missing even when a token for it was presented and
    // failed (gate.md §3.6 step 7, as the reference reports it).
    reasons.push(...tokenFailures, 'delegation_chain_insufficient', 'delegation_token_missing');
    violations.push('delegation_not_granted');
  } else {
    reasons.push('delegation_granted');
  }
  return {
    granted: input.tokens.length > 0 && complete,
    reasonCodes: uniqueSorted(reasons),
    violations,
    validTokenIds: [...validTokenIds].sort(compareUtf8),
    entries,
    validCount: validTokenIds.length,
    requiredLinks: links.length,
  };
}

function delegationEntry(
  source: string,
  token: DelegationToken | undefined,
  valid: boolean,
  errorCode: DelegationErrorCode | '',
): DelegationAuditEntry {
  return {
    source,
    token_id: token?.token_id ?? '',
    delegator_identity: token?.delegator_identity ?? '',
    delegate_identity: token?.delegate_identity ?? '',
    scope: token ? [...token.scope] : [],
    expires_at: token ? formatRFC3339Nano(token.expires_at) : '',
    valid,
    error_code: errorCode,
  };
}

