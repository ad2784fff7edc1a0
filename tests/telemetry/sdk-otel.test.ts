import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { context, ROOT_CONTEXT, trace, type Context, type ContextManager } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardTool, Ward, WardBlockedError } from '../../src/index.js';
import { tempDir } from '../cli/run.js';

// The SDK's `otel` option: a decision is a span on the application's own OpenTelemetry setup,
// child of the active span (docs/observability.md, docs/sdk.md). The application here registers a
// tracer provider with an in-memory exporter and an AsyncLocalStorage context manager, as the
// OpenTelemetry Node SDK does.

/** The context manager @opentelemetry/context-async-hooks provides, in a few lines. */
class AlsContextManager implements ContextManager {
  private readonly als = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.als.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.als.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.als.disable();
    return this;
  }
}

const SECRET = 'SECRET-SDK-ARG-5e1d0a';
const POLICY = `default_verdict: allow
rules:
  - name: block-deletes
    priority: 10
    effect: block
    match:
      tool_names: [fs.delete_file]
`;
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

beforeAll(() => {
  context.setGlobalContextManager(new AlsContextManager());
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
});

const deleteIntent = (path: string) => ({
  schema_id: 'gait.gate.intent_request',
  schema_version: '1.0.0',
  created_at: '2026-01-01T00:00:00Z',
  producer_version: 'test',
  tool_name: 'fs.delete_file',
  args: { path, note: SECRET },
  targets: [{ kind: 'path', value: path, operation: 'delete' }],
  context: { identity: 'agent', workspace: '/workspace', risk_class: 'high' },
});

describe('new Ward({ otel: true })', () => {
  it('records each decision as a span under the active span (guardTool included), with Ward\'s attributes and no argument value', async () => {
    const dir = tempDir('ward-sdk-otel-');
    const ward = new Ward({ policy: POLICY, cwd: dir, stateDir: join(dir, 'state'), otel: true });
    const agent = trace.getTracer('agent');
    const removeFile = guardTool(ward, async (path: string) => `removed ${path}`, (path) => deleteIntent(path));
    let toolSpanId = '';
    let decisionTrace = '';
    await agent.startActiveSpan('execute_tool delete_file', async (toolSpan) => {
      toolSpanId = toolSpan.spanContext().spanId;
      const err = await removeFile('/workspace/prod.db').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WardBlockedError);
      decisionTrace = (err as WardBlockedError).traceId;
      toolSpan.end();
    });
    const spans = exporter.getFinishedSpans();
    const mine = spans.find((s) => s.name === 'ward.decide fs.delete_file')!;
    expect(mine).toBeDefined();
    expect(mine.parentSpanContext?.spanId).toBe(toolSpanId);
    expect(mine.attributes).toMatchObject({ 'ward.host': 'sdk', 'ward.operation': 'evaluate', 'ward.verdict': 'block', 'ward.matched_rule': 'block-deletes', 'ward.trace_id': decisionTrace, 'gen_ai.tool.name': 'fs.delete_file' });
    expect(JSON.stringify(spans.map((s) => s.attributes))).not.toContain(SECRET);
    expect(JSON.stringify(spans.map((s) => s.attributes))).not.toContain('/workspace/prod.db');
    // The span names the signed trace it stands for.
    expect(readFileSync(String(mine.attributes['ward.trace_path']), 'utf8')).toContain(decisionTrace);
    await ward.close();
  });

  it('records nothing without the option', async () => {
    exporter.reset();
    const dir = tempDir('ward-sdk-otel-');
    const ward = new Ward({ policy: POLICY, cwd: dir, stateDir: join(dir, 'state') });
    const d = await ward.evaluate(deleteIntent('/workspace/a.txt'));
    expect(d.verdict).toBe('block');
    expect(exporter.getFinishedSpans()).toEqual([]);
    await ward.close();
  });
});
