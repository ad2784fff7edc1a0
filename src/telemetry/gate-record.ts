import type { IncomingHttpHeaders } from 'node:http';
import { approvalState, targetStrings, type DecisionRecord } from './decision-record.js';
import { str } from './fields.js';
import type { TraceCarrier } from './telemetry.js';

/**
 * The decision record of a `gate eval --json` object (the daemon's gate endpoints). The tool name
 * comes from the request's intent (a name, never an argument); everything else from the output.
 */
export function gateDecisionRecord(
  output: Readonly<Record<string, unknown>>,
  intent: unknown,
  operation: string,
  correlationId: string,
  withTargets = false,
  host: DecisionRecord['host'] = 'serve',
): DecisionRecord {
  const tool = typeof intent === 'object' && intent !== null && !Array.isArray(intent) ? str((intent as Record<string, unknown>)['tool_name']) : '';
  const reasonCodes = Array.isArray(output['reason_codes']) ? output['reason_codes'].filter((c): c is string => typeof c === 'string') : [];
  const verdict = str(output['verdict']);
  return {
    host,
    operation,
    toolName: tool || 'unknown',
    verdict,
    reasonCodes,
    matchedRule: str(output['matched_rule']),
    policyDigest: str(output['policy_digest']),
    intentDigest: str(output['intent_digest']),
    traceId: str(output['trace_id']),
    tracePath: str(output['trace_path']) || undefined,
    approval: approvalState(verdict, reasonCodes),
    correlationId,
    ...(withTargets && typeof intent === 'object' && intent !== null ? { targets: targetStrings((intent as Record<string, unknown>)['targets']) } : {}),
  };
}

/** What the decision service (`/v1/evaluate`, the hooks) knows of a decision (its `DecisionResult`, structurally). */
export interface ServiceDecided {
  verdict: string;
  reasonCodes: readonly string[];
  intentDigest: string;
  policyDigest: string;
  tracePath: string;
  trace: Readonly<Record<string, unknown>>;
  intent: { tool_name: string; targets?: unknown };
}

/** The decision record of one decision of the daemon's decision service: `evaluate` or `hook.<host>`. */
export function serviceDecisionRecord(d: ServiceDecided, operation: string, correlationId: string, withTargets = false, host: DecisionRecord['host'] = 'serve'): DecisionRecord {
  return {
    host,
    operation,
    toolName: d.intent.tool_name || 'unknown',
    verdict: d.verdict,
    reasonCodes: d.reasonCodes,
    matchedRule: str(d.trace['matched_rule']),
    policyDigest: d.policyDigest,
    intentDigest: d.intentDigest,
    traceId: str(d.trace['trace_id']),
    tracePath: d.tracePath,
    approval: approvalState(d.verdict, d.reasonCodes),
    correlationId,
    ...(withTargets ? { targets: targetStrings(d.intent.targets) } : {}),
  };
}

/** The W3C trace context of an HTTP request (`traceparent`, `tracestate` headers). */
export function httpTraceCarrier(headers: IncomingHttpHeaders): TraceCarrier {
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  return { traceparent: one(headers['traceparent']), tracestate: one(headers['tracestate']) };
}
