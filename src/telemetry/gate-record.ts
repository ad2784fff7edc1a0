import type { IncomingHttpHeaders } from 'node:http';
import { approvalState, type DecisionRecord } from './decision-record.js';
import type { TraceCarrier } from './telemetry.js';

/**
 * The decision record of a `gate eval --json` object (the daemon's gate endpoints). The tool name
 * comes from the request's intent (a name, never an argument); everything else from the output.
 */
export function gateDecisionRecord(output: Readonly<Record<string, unknown>>, intent: unknown, operation: string, correlationId: string): DecisionRecord {
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  const tool = typeof intent === 'object' && intent !== null && !Array.isArray(intent) ? str((intent as Record<string, unknown>)['tool_name']) : '';
  const reasonCodes = Array.isArray(output['reason_codes']) ? output['reason_codes'].filter((c): c is string => typeof c === 'string') : [];
  const verdict = str(output['verdict']);
  return {
    host: 'serve',
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
  };
}

/** The W3C trace context of an HTTP request (`traceparent`, `tracestate` headers). */
export function httpTraceCarrier(headers: IncomingHttpHeaders): TraceCarrier {
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  return { traceparent: one(headers['traceparent']), tracestate: one(headers['tracestate']) };
}
