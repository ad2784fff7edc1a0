import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../cli/run.js';
import { call, startDaemon, workdir, type DaemonChild } from './helpers.js';

/*
 * Issue 26, finding 4, through the daemon: `ward serve` decides for another machine, and resolves
 * names itself (the network view closest to the effect it has). Under the shipped low-risk
 * baseline, loopback and metadata spellings are blocked, and the signed trace records what a name
 * resolved to.
 */

let daemon: DaemonChild;
const w = workdir();

beforeAll(async () => {
  copyFileSync(join(REPO, 'policies', 'baseline-lowrisk.yaml'), w.policy);
  daemon = await startDaemon(['--policy', w.policy, '--ingest-interval-ms', '0'], { cwd: w.dir });
});
afterAll(async () => {
  await daemon?.stop();
});

const fetchIntent = (url: string) => ({
  intent: {
    tool_name: 'http.get',
    args: { url },
    targets: [{ kind: 'url', value: url, operation: 'read' }],
    arg_provenance: [{ arg_path: '$.url', source: 'user' }],
    context: { identity: 'agent', workspace: '/w', risk_class: 'low' },
  },
});

describe('ward serve: hosts that mean loopback or metadata', () => {
  it('blocks loopback and metadata spellings, and allows an ordinary site', async () => {
    for (const url of ['http://0:8080/', 'http://[::]/', 'http://127.0.0.2/', 'http://metadata.goog/', 'http://[fd00:ec2::254]/']) {
      const r = await call(daemon.url, '/v1/gate/eval', { body: fetchIntent(url) });
      expect([url, r.status, r.json.verdict]).toEqual([url, 200, 'block']);
      expect(r.json.reason_codes).toContain('endpoint_domain_denied');
    }
    const ok = await call(daemon.url, '/v1/gate/eval', { body: fetchIntent('https://docs.example.com/') });
    expect(ok.json.verdict).toBe('allow');
  });

  it('resolves names and records what they resolved to in the signed trace', async () => {
    const r = await call(daemon.url, '/v1/gate/eval', { body: fetchIntent('http://localhost:8080/') });
    expect(r.json.verdict).toBe('block');
    const eventId = String(r.json.trace_path).slice('store:trace/'.length);
    const trace = (await call(daemon.url, `/v1/traces/${eventId}`)).json.trace;
    const note = trace.canonical_targets.find((n: { kind: string }) => n.kind === 'url');
    expect(note.resolved_addresses.some((a: string) => a === '127.0.0.1' || a === '::1')).toBe(true);
  });
});
