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
  /** The payload the client gets (the original object when `pass`). */
  delivered: unknown;
  /** Detector/kind pairs found, for the reply's `ward` object and the log (never the matched text). */
  flagged: string[];
  reasonCodes: string[];
  /** What the result's signed decision records. */
  outcome: () => ResultOutcome;
}

/** At most this many findings are itemised in a trace's subject (the count is always exact). */
const MAX_FINDINGS_IN_TRACE = 50;

export function screenResult(payload: unknown, config: ResultsConfig, digestKey: Uint8Array, observedAt: string): Screened {
  const inspection = inspectResult(payload, config, { digestKey });
  const { action, findings } = inspection;
  const delivered = action === 'pass' ? payload : applyResultAction(payload, findings, action);
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
    return { verdict: verdictOf(action), reasonCodes, violations: resultViolations(findings), facts, observedAt };
  };
  return { action, delivered, flagged, reasonCodes, outcome };
}

/** A result the firewall let through counts as allowed; only a withheld one is a block. */
function verdictOf(action: ResultAction): Verdict {
  return action === 'block' ? 'block' : 'allow';
}

/** Where a finding is and what it is; its digest stays out (a keyed digest means nothing later, a plain one of PII can be guessed). */
function findingFact(f: ResultFinding): JsonObject {
  return { detector: f.detector, kind: f.kind, path: f.path, offset: f.offset, length: f.length, action: f.action };
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
