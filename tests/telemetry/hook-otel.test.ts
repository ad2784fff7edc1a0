import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, WARD, tempDir } from '../cli/run.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';

// `ward hook claude-code` (the built CLI, through its bundle) with OpenTelemetry export to a real
// OTLP/HTTP receiver in this process, with the collector down, and off (docs/observability.md
// "The command hook").

const BASELINE = join(REPO, 'policies', 'baseline-lowrisk.yaml');
const PARENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_SPAN = '00f067aa0ba902b7';

let receiver: OtlpReceiver;
let cwd: string;
/** A preloaded module that appends to `loaded` every @opentelemetry module the process loads. */
let guard: string;
let loaded: string;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  cwd = tempDir('ward-hook-otel-');
  loaded = join(cwd, 'otel-modules.log');
  guard = join(cwd, 'guard.cjs');
  writeFileSync(
    guard,
    `const M = require('node:module'); const fs = require('node:fs'); const load = M._load;
M._load = function (request, ...rest) { if (String(request).startsWith('@opentelemetry/')) fs.appendFileSync(${JSON.stringify(loaded)}, request + '\\n'); return load.call(this, request, ...rest); };\n`,
  );
});

afterAll(async () => {
  await receiver?.close();
});

/** One hook call (async: the receiver lives in this process), the event asking to read `file`. */
function hook(file: string, env: Record<string, string>, args: string[] = []): Promise<{ code: number; stdout: string; stderr: string }> {
  const input = JSON.stringify({ session_id: 's-1', cwd, hook_event_name: 'PreToolUse', tool_name: 'Read', tool_input: { file_path: file }, tool_use_id: 'toolu_1' });
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [WARD, 'hook', 'claude-code', '--policy', BASELINE, '--state-dir', join(cwd, '.ward'), ...args], {
      cwd,
      env: { ...process.env, WARD_STATE_DIR: '', WARD_OTEL: '', OTEL_EXPORTER_OTLP_ENDPOINT: '', NODE_OPTIONS: `--require ${guard}`, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input);
  });
}

const decisionOf = (stdout: string) => (JSON.parse(stdout) as { hookSpecificOutput: { permissionDecision: string } }).hookSpecificOutput.permissionDecision;
const otelLoads = () => {
  try {
    return readFileSync(loaded, 'utf8').trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
};

/** A port nothing listens on: a collector that is down. */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

describe('ward hook claude-code --otel', () => {
  it('loads no OpenTelemetry module when telemetry is off', async () => {
    const r = await hook('/etc/shadow', {});
    expect([r.code, decisionOf(r.stdout)]).toEqual([0, 'deny']);
    expect(otelLoads()).toEqual([]);
  });

  it('exports the decision as a span, child of TRACEPARENT, and a log record, after the same reply', async () => {
    const off = await hook('/etc/shadow', {});
    const r = await hook('/etc/shadow', { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, TRACEPARENT: `00-${PARENT_TRACE}-${PARENT_SPAN}-01` }, ['--otel']);
    expect([r.code, decisionOf(r.stdout)]).toEqual([off.code, 'deny']);
    expect(otelLoads().length).toBeGreaterThan(0); // the guard sees the SDK when it is asked for
    await receiver.waitFor(() => receiver.spans.some((s) => s.attributes['ward.host'] === 'hook'), 'the hook span');
    const span = receiver.spans.find((s) => s.attributes['ward.host'] === 'hook')!;
    expect([span.name, span.kind, span.traceId, span.parentSpanId]).toEqual(['ward.decide tool.read', 'SPAN_KIND_INTERNAL', PARENT_TRACE, PARENT_SPAN]);
    expect(span.attributes).toMatchObject({ 'ward.operation': 'hook.claude-code', 'ward.verdict': 'block', 'gen_ai.operation.name': 'execute_tool' });
    expect(span.endMs).toBeGreaterThanOrEqual(span.startMs);
    await receiver.waitFor(() => receiver.logs.some((l) => l.spanId === span.spanId), 'the hook log record');
    expect(receiver.logs.find((l) => l.spanId === span.spanId)!.attributes['ward.trace_id']).toBe(span.attributes['ward.trace_id']);
    // Names, digests and codes only: the path read is nowhere in the exported bytes.
    expect(Buffer.concat(receiver.bodies).includes('/etc/shadow')).toBe(false);
  });

  it('answers the same with the collector down (WARD_OTEL=1), and exits', async () => {
    const off = await hook('/etc/shadow', {});
    const down = await hook('/etc/shadow', { WARD_OTEL: '1', OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await deadPort()}` });
    expect([down.code, decisionOf(down.stdout)]).toEqual([off.code, 'deny']);
    const allowed = await hook(join(cwd, 'notes.txt'), { WARD_OTEL: '1', OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await deadPort()}` });
    expect([allowed.code, decisionOf(allowed.stdout)]).toEqual([0, 'allow']);
  });
});
