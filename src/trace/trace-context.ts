import type { TraceContext } from '../intent/types.js';

/**
 * W3C Trace Context (Level 1) carried into a trace record, so a decision can be joined to the
 * agent's distributed trace. Ward-only: it lives inside the signature of `ward`-format traces.
 *
 * Invalid input is dropped with a warning rather than failing the decision: the header is
 * correlation metadata supplied by the caller, and the spec tells receivers to ignore a traceparent
 * they cannot parse (and then the tracestate with it). Recording it anyway would sign garbage that
 * no tracing system could join on.
 */
/** The shape the intent normalizer produces for `context.traceparent` / `tracestate` ("" when none). */
export type { TraceContext };

export interface TraceContextInput {
  traceparent?: unknown;
  tracestate?: unknown;
}

export interface ParsedTraceContext {
  context: TraceContext | undefined;
  warnings: string[];
}

const TRACEPARENT_00 = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
const TRACEPARENT_ANY = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}(-.*)?$/s;
const TRACESTATE_KEY = /^(?:[a-z0-9][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13})$/;
const TRACESTATE_VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;
const MAX_TRACESTATE_MEMBERS = 32;
const ALL_ZERO = /^0+$/;

export function parseTraceContext(input: TraceContextInput): ParsedTraceContext {
  if (input.traceparent === undefined || input.traceparent === null || input.traceparent === '') {
    return { context: undefined, warnings: [] };
  }
  const traceparent = typeof input.traceparent === 'string' ? input.traceparent.trim() : '';
  const problem = traceparentProblem(traceparent);
  if (problem) return { context: undefined, warnings: [`invalid traceparent ignored: ${problem}`] };
  if (input.tracestate === undefined || input.tracestate === null || input.tracestate === '') {
    return { context: { traceparent, tracestate: '' }, warnings: [] };
  }
  const state = typeof input.tracestate === 'string' ? normalizeTracestate(input.tracestate) : { problem: 'not a string' };
  if ('problem' in state) {
    return { context: { traceparent, tracestate: '' }, warnings: [`invalid tracestate ignored: ${state.problem}`] };
  }
  return { context: { traceparent, tracestate: state.value }, warnings: [] };
}

function traceparentProblem(value: string): string | undefined {
  const any = TRACEPARENT_ANY.exec(value);
  if (!any) return 'expected version-traceid-parentid-flags in lowercase hex';
  const [, version, traceId, parentId] = any as unknown as [string, string, string, string];
  if (version === 'ff') return 'version ff is invalid';
  if (version === '00' && !TRACEPARENT_00.test(value)) return 'version 00 has exactly four fields';
  if (ALL_ZERO.test(traceId)) return 'trace-id is all zeros';
  if (ALL_ZERO.test(parentId)) return 'parent-id is all zeros';
  return undefined;
}

function normalizeTracestate(text: string): { value: string } | { problem: string } {
  const members = text
    .split(',')
    .map((member) => member.replace(/^[ \t]+|[ \t]+$/g, ''))
    .filter((member) => member !== '');
  if (members.length > MAX_TRACESTATE_MEMBERS) return { problem: `more than ${MAX_TRACESTATE_MEMBERS} list-members` };
  const seen = new Set<string>();
  for (const member of members) {
    const eq = member.indexOf('=');
    const key = eq < 0 ? member : member.slice(0, eq);
    const value = eq < 0 ? '' : member.slice(eq + 1);
    if (eq < 0 || !TRACESTATE_KEY.test(key) || !TRACESTATE_VALUE.test(value)) return { problem: `bad list-member ${JSON.stringify(member)}` };
    if (seen.has(key)) return { problem: `duplicate key ${JSON.stringify(key)}` };
    seen.add(key);
  }
  return { value: members.join(',') };
}
