import { describe, expect, it } from 'vitest';
import { buildTraceRecord, parseTraceContext } from '../../src/trace/index.js';
import { v7Intent, v7TraceInput } from './fixtures.js';

const PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('W3C trace context', () => {
  it('keeps a valid traceparent and normalizes tracestate list-members', () => {
    expect(parseTraceContext({ traceparent: ` ${PARENT} `, tracestate: 'congo=t61rcWkgMzE, rojo=00f067aa0ba902b7,,' })).toEqual({
      context: { traceparent: PARENT, tracestate: 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7' },
      warnings: [],
    });
  });

  it('accepts a future version with extra fields, per the spec', () => {
    const future = '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra';
    expect(parseTraceContext({ traceparent: future }).context?.traceparent).toBe(future);
  });

  it('drops an invalid traceparent (and its tracestate) with a warning', () => {
    for (const bad of [
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra',
      'garbage',
    ]) {
      const parsed = parseTraceContext({ traceparent: bad, tracestate: 'a=b' });
      expect(parsed.context, bad).toBeUndefined();
      expect(parsed.warnings[0], bad).toMatch(/^invalid traceparent ignored: /);
    }
  });

  it('keeps the traceparent but drops an invalid tracestate', () => {
    const parsed = parseTraceContext({ traceparent: PARENT, tracestate: 'a=b,a=c' });
    expect(parsed.context).toEqual({ traceparent: PARENT, tracestate: '' });
    expect(parsed.warnings).toEqual(['invalid tracestate ignored: duplicate key "a"']);
  });

  it('is recorded in ward traces (transport context winning over the intent) and never in gait traces', () => {
    const intent = { ...v7Intent(), trace_context: { traceparent: PARENT, tracestate: '' } };
    const fromIntent = buildTraceRecord({ ...v7TraceInput(), intent }, 'ward');
    expect(fromIntent['trace_context']).toEqual({ traceparent: PARENT });
    const header = '00-11111111111111111111111111111111-2222222222222222-00';
    const fromHeader = buildTraceRecord({ ...v7TraceInput(), intent, traceContext: { traceparent: header, tracestate: 'x=y' } }, 'ward');
    expect(fromHeader['trace_context']).toEqual({ traceparent: header, tracestate: 'x=y' });
    expect(buildTraceRecord({ ...v7TraceInput(), intent }, 'gait')['trace_context']).toBeUndefined();
  });
});
