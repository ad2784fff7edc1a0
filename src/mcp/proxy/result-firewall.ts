import { sha256Hex, type JsonObject } from '../../canon/index.js';
import type { ResultAction, ResultsConfig, Verdict } from '../../policy/types.js';
import { applyResultAction, inspectResult, type ResultFinding } from '../../witness/index.js';
import type { ResultOutcome } from './gatekeeper.js';

/**
 * The result firewall on the wire (docs/witness.md, docs/mcp-proxy.md "Result firewall"): what the
 * client receives instead of a tool result the policy's `results` section flags, and the facts its
 * signed trace records. Pure: the session does the I/O.
 */

/** One screened result: what to deliver and what to sign. */
export interface Screened {
  action: ResultAction;
  /** The payload the client gets (the original object when `pass`; undefined for a blocked `payload`). */
  delivered: unknown;
  /** Detector/kind pairs found, for the reply's `ward` object and the log (never the matched text). */
  flagged: string[];
  reasonCodes: string[];
  /** What the result's signed decision records. */
  outcome: () => ResultOutcome;
}

/** At most this many findings are itemised in a trace's subject (the count is always exact). */
const MAX_FINDINGS_IN_TRACE = 50;

/**
 * What a payload is, for what a block delivers: a `tools/call` result (`tool_result`: an MCP
 * `isError` result naming the detectors) or anything else (`payload`: nothing — the caller drops
 * a notification or answers a request with a JSON-RPC error, `blockedText(flagged)`).
 */
export type PayloadShape = 'tool_result' | 'payload';

export interface ScreenOptions {
  config: ResultsConfig;
  /** Key for the findings' digests (the session's). */
  digestKey: Uint8Array;
  /** When the payload was seen (RFC 3339), for its signed decision. */
  observedAt: string;
  shape: PayloadShape;
}

/**
 * The one screen for everything a server sends toward the client (docs/witness.md "One screen
 * for every shape"): a result of any method, a JSON-RPC error object, a notification's params
 * (`notifications/message`, `notifications/progress`...), a server request's params
 * (`sampling/createMessage`, `elicitation/create`). Every string and object key is screened as
 * is and normalized (NFKC, invisible characters removed), every base64 blob decoded, adjacent
 * array items joined. `delivered` is the payload itself on `pass`, a redacted copy on `redact`;
 * on `block`, the blocked tool result (`tool_result`) or undefined (`payload`).
 */
export function screenPayload(payload: unknown, o: ScreenOptions): Screened {
  const inspection = inspectResult(payload, o.config, { digestKey: o.digestKey });
  const { action, findings } = inspection;
  const delivered = action === 'pass' ? payload : action === 'block' && o.shape === 'payload' ? undefined : applyResultAction(payload, findings, action);
  const flagged = [...new Set(findings.map((f) => `${f.detector}:${f.kind}`))].sort();
  const reasonCodes = resultReasonCodes(findings);
  // The facts (digests of the result) are computed when the decision is signed: for a passed
  // result, after it went out.
  const outcome = (): ResultOutcome => {
    const facts: JsonObject = {
      action,
      result_bytes: inspection.bytes === Number.MAX_SAFE_INTEGER ? -1 : inspection.bytes,
      result_digest: digestOf(payload),
      finding_count: findings.length,
      findings: findings.slice(0, MAX_FINDINGS_IN_TRACE).map(findingFact),
    };
    if (inspection.truncated) facts['truncated'] = true;
    if (action !== 'pass') facts['delivered_digest'] = digestOf(delivered);
    return { verdict: verdictOf(action), reasonCodes, violations: resultViolations(findings), facts, observedAt: o.observedAt };
  };
  return { action, delivered, flagged, reasonCodes, outcome };
}

/** A `tools/call` result or error screened (`screenPayload` with the `tool_result` shape). */
export function screenResult(payload: unknown, config: ResultsConfig, digestKey: Uint8Array, observedAt: string): Screened {
  return screenPayload(payload, { config, digestKey, observedAt, shape: 'tool_result' });
}

/** A result the firewall let through counts as allowed; only a withheld one is a block. */
function verdictOf(action: ResultAction): Verdict {
  return action === 'block' ? 'block' : 'allow';
}

/** Where a finding is and what it is; its digest stays out (a keyed digest means nothing later, a plain one of PII can be guessed). */
function findingFact(f: ResultFinding): JsonObject {
  const fact: JsonObject = { detector: f.detector, kind: f.kind, path: f.path, offset: f.offset, length: f.length, action: f.action };
  if (f.view !== undefined) fact['view'] = f.view;
  return fact;
}

function digestOf(value: unknown): string {
  try {
    return sha256Hex(JSON.stringify(value) ?? '');
  } catch {
    return '';
  }
}

/**
 * Reason codes of a result decision: one per detector that found something (the registry's
 * `mcp_result_*`); none when the result is clean. The verdict and `_meta.ward.result_action` say
 * what was done.
 */
export function resultReasonCodes(findings: readonly ResultFinding[]): string[] {
  return [...new Set(findings.map((f) => DETECTOR_CODES[f.detector]))].sort();
}

/** `result_firewall` when a finding was acted on (redacted or blocked), as the registry gives it. */
function resultViolations(findings: readonly ResultFinding[]): string[] {
  return findings.some((f) => f.action !== 'pass') ? ['result_firewall'] : [];
}

const DETECTOR_CODES: Readonly<Record<ResultFinding['detector'], string>> = {
  credentials: 'mcp_result_credentials_detected',
  pii: 'mcp_result_pii_detected',
  invisible: 'mcp_result_invisible_characters',
  oversize: 'mcp_result_oversize',
};

/** The text of a blocked result delivered as a JSON-RPC error: the same words as the result form. */
export function blockedText(flagged: readonly string[]): string {
  const named = flagged.map((f) => {
    const [detector, kind] = f.split(':');
    return `${detector} (${kind})`;
  });
  return `Ward blocked this tool result: the result firewall flagged ${named.join(', ')}.`;
}
