import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, consoleDaemon, evalIntent, intentFor, openStream } from './console-helpers.js';
import { call } from './helpers.js';

afterEach(closeAll);

describe('GET /v1/decisions/stream', () => {
  it('pushes every decision and every new pending approval as it happens; filters apply to decisions', async () => {
    const { d } = await consoleDaemon();
    const all = await openStream(d.url, '/v1/decisions/stream');
    expect(all.status).toBe(200);
    const blocks = await openStream(d.url, '/v1/decisions/stream?verdict=block&identity=agent.alpha');
    const w = await evalIntent(d.url, intentFor('fs.write_file', '/workspace/a.yaml'));
    const approval = await all.next((e) => e.event === 'approval');
    expect(approval.data).toMatchObject({ kind: 'pending', status: 'pending', tool_name: 'fs.write_file', identity: 'agent.alpha', trace_id: w.json.trace_id });
    const decision = await all.next((e) => e.event === 'decision' && e.data.trace_id === w.json.trace_id);
    expect(decision.data).toMatchObject({ verdict: 'require_approval', tool_name: 'fs.write_file', identity: 'agent.alpha', matched_rule: 'approve-writes' });
    expect(decision.data.reason_codes).toContain('approval_token_missing');
    const b = await evalIntent(d.url, intentFor('proc.exec', '/bin/sh'));
    const blocked = await blocks.next((e) => e.event === 'decision');
    expect(blocked.data).toMatchObject({ verdict: 'block', trace_id: b.json.trace_id });
    // The filtered stream saw the approval event (unfiltered) but not the require_approval decision.
    expect(blocks.events.filter((e) => e.event === 'decision').map((e) => e.data.verdict)).toEqual(['block']);
    // since_seq replays what was missed.
    const replay = await openStream(d.url, `/v1/decisions/stream?since_seq=0&tool=proc.exec`);
    expect((await replay.next((e) => e.event === 'decision')).data.trace_id).toBe(b.json.trace_id);
    for (const s of [all, blocks, replay]) s.close();
    expect((await call(d.url, '/v1/decisions/stream?bogus=1')).status).toBe(400);
  });

  it('at most 64 streams are open at once (429 beyond); a closed one frees its place', async () => {
    const { d } = await consoleDaemon();
    const streams = await Promise.all(Array.from({ length: 64 }, () => openStream(d.url, '/v1/decisions/stream')));
    expect(streams.every((s) => s.status === 200)).toBe(true);
    const over = await call(d.url, '/v1/decisions/stream');
    expect(over.status).toBe(429);
    expect(over.headers['retry-after']).toBe('5');
    expect((await call(d.url, '/metrics')).text).toContain('ward_decision_streams 64');
    streams.pop()!.close();
    let again = await openStream(d.url, '/v1/decisions/stream');
    for (let i = 0; i < 100 && again.status !== 200; i++) {
      again.close(); // the server notices the closed socket shortly after
      await new Promise((r) => setTimeout(r, 50));
      again = await openStream(d.url, '/v1/decisions/stream');
    }
    expect(again.status).toBe(200);
    for (const s of [...streams, again]) s.close();
  });

  it('an open stream does not hold up shutdown', async () => {
    const { d } = await consoleDaemon();
    const s = await openStream(d.url, '/v1/decisions/stream');
    await d.close(); // would wait for the shutdown timeout (10 s, beyond the test's) if the stream held it
    s.close();
  });
});

describe('GET /v1/decisions/{trace_id}', () => {
  it('shows the trace, its signature status and key, the rule and what each reason code means', async () => {
    const { d } = await consoleDaemon();
    const r = await evalIntent(d.url, intentFor('fs.write_file', '/workspace/a.yaml'));
    const detail = await call(d.url, `/v1/decisions/${r.json.trace_id}`);
    expect(detail.status).toBe(200);
    expect(detail.json).toMatchObject({ ok: true, trace_id: r.json.trace_id, verdict: 'require_approval', matched_rule: 'approve-writes', signature: { status: 'verified', key_id: d.context.keys.current.keyId }, identity: 'agent.alpha', packs: [] });
    const code = detail.json.reason_codes.find((c: any) => c.code === 'approval_token_missing');
    expect(code.meaning).toBe('approval required and no token given');
    expect((await call(d.url, '/v1/decisions/nope-not-there')).status).toBe(404);
  });
});
