import type { SpanPlan, SpanKindName, TraceCarrier } from './items.js';

/** A span's identity, fixed where the decision is made: what the forwarded request carries, and the plan to record (when sampled). */
interface PlannedSpan {
  carrier: TraceCarrier;
  /** Undefined when the sampler left the span out: nothing is recorded, the carrier says "not sampled". */
  plan: SpanPlan | undefined;
}

type SpanPlanner = (name: string, kind: SpanKindName, parent: TraceCarrier | undefined, start: number) => PlannedSpan;

/**
 * What the SDK's tracer does when a span starts — parent from the W3C context, ids, the sampling
 * decision of `OTEL_TRACES_SAMPLER` — with the SDK's own propagator, id generator and sampler, but
 * without a span object: the span itself is made on the exporting side (`recorder.ts`) with these
 * ids, so the deciding thread pays for the identity only.
 */
export async function spanPlanner(): Promise<SpanPlanner> {
  const [api, core, traceSdk, traceConfig] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/core'),
    import('@opentelemetry/sdk-trace-base'),
    // The SDK's own reading of OTEL_TRACES_SAMPLER / _ARG (what BasicTracerProvider uses by default).
    import('@opentelemetry/sdk-trace-base/build/src/config.js'),
  ]);
  const sampler = traceConfig.buildSamplerFromEnv();
  const ids = new traceSdk.RandomIdGenerator();
  const propagator = new core.W3CTraceContextPropagator();
  const kinds = { client: api.SpanKind.CLIENT, server: api.SpanKind.SERVER, internal: api.SpanKind.INTERNAL };
  const noAttributes = Object.freeze({});
  const noLinks: never[] = [];
  return (name, kind, parent, start) => {
    const ctx = parent?.traceparent ? propagator.extract(api.ROOT_CONTEXT, parent, api.defaultTextMapGetter) : api.ROOT_CONTEXT;
    const parentContext = api.trace.getSpanContext(ctx);
    const child = parentContext !== undefined && api.trace.isSpanContextValid(parentContext);
    const traceId = child ? parentContext.traceId : ids.generateTraceId();
    const spanId = ids.generateSpanId();
    const sampling = sampler.shouldSample(ctx, traceId, name, kinds[kind], noAttributes, noLinks);
    const sampled = sampling.decision === traceSdk.SamplingDecision.RECORD_AND_SAMPLED;
    // As the W3C propagator writes it (version 00).
    const carrier: TraceCarrier = { traceparent: `00-${traceId}-${spanId}-0${sampled ? 1 : 0}` };
    const traceState = (sampling.traceState ?? (child ? parentContext.traceState : undefined))?.serialize() || undefined;
    if (traceState) carrier.tracestate = traceState;
    if (!sampled) return { carrier, plan: undefined };
    // What the SDK's tracer would give the span: these ids, this tracestate, the sampler's attributes.
    return { carrier, plan: { name, kind, traceId, spanId, parent: child ? parent : undefined, start, traceState, samplerAttributes: plainAttributes(sampling.attributes) } };
  };
}

/** A sampler's attributes as plain values (they cross to the telemetry thread); none is the common case. */
function plainAttributes(attributes: Readonly<Record<string, unknown>> | undefined): Record<string, string | number | boolean> | undefined {
  if (!attributes) return undefined;
  const out: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(attributes)) if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = v;
  return Object.keys(out).length > 0 ? out : undefined;
}
