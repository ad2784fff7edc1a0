import type { GoTime } from '../canon/index.js';
import type { GateOutcome } from '../gate/evaluate.js';
import type { ApprovalRollup, DelegationRollup } from '../gate/post-process.js';
import type { NormalizedIntent } from '../intent/types.js';
import type { PathResolution } from './path-view.js';
import type { SigningKey } from '../keys/index.js';
import type { LoadedPolicy } from '../policy/types.js';
import type { LimitCounter } from '../state/rate-limit.js';
import type { ApprovalLedger, SharedTokenLedger } from '../state/token-ledger.js';
import type { SignedTrace, TraceFormat } from '../trace/index.js';

/*
 * The types every decision shares. They live apart from the pipeline so that steps, the trace
 * assembler and the hosts can name them without importing each other.
 */

/** What signs a decision: the policy it was made under, the key, the trace field set. */
export interface DecisionBasis {
  policy: LoadedPolicy;
  signingKey: SigningKey;
  traceFormat: TraceFormat;
  producerVersion?: string;
  /**
   * `filesystem` where the host sees the disk the tool uses (gate eval, SDK, hook, local MCP
   * proxy): paths are resolved (links) before evaluation. Default `lexical` (a daemon deciding
   * for another machine); its traces say so (decision/path-view.ts).
   */
  pathResolution?: PathResolution;
}

/** What one gate decision needs besides the intent; load it once and reuse it (daemon, proxy). */
export interface GateRuntime extends DecisionBasis {
  /** Where traces go when no explicit path is given (`.ward/traces`). */
  traceDir: string;
  /** Rate-limit and destructive-budget counters (`.ward/gate_rate_limits.json`). */
  rateLimitStatePath: string;
  profile: 'standard' | 'oss-prod';
  /**
   * The consumed-token ledger directory shared by every process deciding with this state
   * (docs/approvals.md "One use"). Default: `token_ledger` beside `traceDir`, i.e.
   * `.ward/token_ledger` for every host that keeps traces in `<state>/traces`.
   */
  tokenLedgerDir?: string;
  /**
   * `once` (the default): an approval token grants one decision, then is refused with
   * `approval_token_consumed`. `ttl`: the reference behaviour, a token may be reused until it
   * expires — an explicit opt-in (`ward gate eval --approval-token-reuse ttl`).
   */
  approvalTokenReuse?: ApprovalTokenReuse;
  /**
   * Counters and the token ledger shared with other replicas through the cluster database (`ward
   * serve --store postgres://…`); they replace `rateLimitStatePath` and `tokenLedgerDir`. Their
   * answers are promises, so such a runtime decides with `decideGateAsync`; `decideGate` refuses it.
   */
  sharedState?: SharedDecisionState;
  /** Keep the normalized intent of each decision next to its trace (for replay); off by default for privacy. */
  captureIntents?: boolean;
  warnings?: string[];
}

export type ApprovalTokenReuse = 'once' | 'ttl';

/** Decision state shared through the cluster database (src/cluster/limits.ts, src/cluster/ledger.ts). */
export interface SharedDecisionState {
  limits: LimitCounter;
  tokens: SharedTokenLedger;
}

/** The intent a trace is about, with the digests it is signed under. */
export interface DecisionSubject {
  intent: NormalizedIntent;
  intentDigest: string;
  argsDigest: string;
}

/** The digests and requirements tokens must bind to. */
export interface TokenContext {
  intent: NormalizedIntent;
  intentDigest: string;
  policyDigest: string;
  delegationDigest: string;
  outcome: GateOutcome;
  traceId: string;
  wallNow: GoTime;
  /** The consumed-token ledger; undefined when tokens may be reused until they expire. */
  approvalLedger?: ApprovalLedger | undefined;
  /**
   * Whether a grant consumes its tokens: only when the approval decides the call (not under
   * `simulate`, and not when a broker requirement will block the call anyway).
   */
  consumeApprovals: boolean;
  /** Who may root a delegation chain (the matched rules' `allowed_delegator_identities`, intersected). */
  allowedRootDelegators?: readonly string[] | undefined;
  /** A matched rule binds approvals to the session (`approval_binding: session`): a call digest does not stand in. */
  approvalSessionBound?: boolean | undefined;
}

export interface ApprovalStep extends ApprovalRollup {
  requiredApprovals: number;
  validApprovals: number;
  approvalRef: string;
  /** Written after the trace, which the audit references; returns the path. */
  writeAudit?: (trace: SignedTrace) => string;
}

export interface DelegationStep extends DelegationRollup {
  validDelegations: number;
  delegationRef: string;
  writeAudit?: (trace: SignedTrace) => string;
}
