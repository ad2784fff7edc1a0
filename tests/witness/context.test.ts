import { describe, expect, it } from 'vitest';
import { jcs, parseRFC3339, sha256Hex } from '../../src/canon/index.js';
import { contextEnvelopeJson, envelopeContextAgeSeconds, parseContextEnvelope } from '../../src/context/index.js';
import { parsePolicyYaml } from '../../src/policy/index.js';
import { isRetrievalTool, resultContentDigest, WitnessedContext, witnessedLocator, witnessedRecord } from '../../src/witness/context.js';

const at = (s: string) => parseRFC3339(s);
const result = { content: [{ type: 'text', text: '# Runbook\nRestart the service.' }], _meta: { progressToken: 1 } };
const retrieval = {
  server: 'filesystem',
  toolName: 'read_file',
  args: { path: '/docs/runbook.md' },
  result,
  seenAt: at('2026-03-12T11:00:00.5Z'),
  traceId: 'a1b2c3d4e5f6a1b2c3d4e5f6',
};

describe('witnessed context records', () => {
  it('build a ContextSpec v1 record from what Ward saw', () => {
    const r = witnessedRecord(retrieval);
    expect(r).toMatchObject({
      ref_id: 'witness:a1b2c3d4e5f6a1b2c3d4e5f6',
      source_type: 'mcp_tool_result',
      source_locator: 'mcp://filesystem/tools/read_file?path=%2Fdocs%2Frunbook.md',
      query_digest: sha256Hex(jcs({ path: '/docs/runbook.md' })),
      content_digest: sha256Hex(jcs({ content: result.content })),
      redaction_mode: 'reference',
      immutability: 'unknown',
      retrieval_params: { mcp_server: 'filesystem', mcp_tool: 'read_file', trace_id: 'a1b2c3d4e5f6a1b2c3d4e5f6' },
    });
    expect(r.retrieved_at).toEqual(at('2026-03-12T11:00:00.5Z'));
  });

  it('digest the result canonically: key order and _meta do not matter, content does', () => {
    const a = resultContentDigest({ content: [{ type: 'text', text: 'x' }], isError: false });
    expect(resultContentDigest({ isError: false, content: [{ text: 'x', type: 'text' }], _meta: { z: 1 } })).toBe(a);
    expect(resultContentDigest({ content: [{ type: 'text', text: 'y' }], isError: false })).not.toBe(a);
  });

  it('locate by the usual locator argument, else by tool only', () => {
    expect(witnessedLocator('srv x', 'fetch', { url: 'https://ex.example/a?b=c', other: 1 })).toBe(
      'mcp://srv%20x/tools/fetch?url=https%3A%2F%2Fex.example%2Fa%3Fb%3Dc',
    );
    expect(witnessedLocator('s', 'search', { query: 'secret plans' })).toBe('mcp://s/tools/search');
  });

  it('class retrieval tools as the policy says', () => {
    const { context } = parsePolicyYaml('context: {retrieval_tools: [Read_File]}\n').policy;
    expect(isRetrievalTool(context, 'read_file')).toBe(true);
    expect(isRetrievalTool(context, ' READ_FILE ')).toBe(true);
    expect(isRetrievalTool(context, 'write_file')).toBe(false);
    expect(isRetrievalTool(parsePolicyYaml('').policy.context, 'read_file')).toBe(false);
  });
});

describe('WitnessedContext (a session)', () => {
  it('gives a verified envelope that parses back to the same digest and binds with freshness', () => {
    const session = new WitnessedContext();
    session.observe(retrieval);
    session.observe({ ...retrieval, toolName: 'fetch', args: { url: 'https://x.example' }, traceId: 'ffff', seenAt: at('2026-03-12T11:59:00Z') });
    const env = session.envelope({ contextSetId: 'session-1', createdAt: at('2026-03-12T12:00:00Z') });
    expect(env.evidence_mode).toBe('required');
    expect(env.records).toHaveLength(2);
    const reparsed = parseContextEnvelope(JSON.stringify(contextEnvelopeJson(env)));
    expect(reparsed.context_set_digest).toBe(env.context_set_digest);
    expect(envelopeContextAgeSeconds(env, at('2026-03-12T12:00:00Z'))).toBe(3599);
  });

  it('replaces a re-read of the same document, skips error results, and bounds the session', () => {
    const session = new WitnessedContext({ maxRecords: 2 });
    session.observe(retrieval);
    const again = session.observe({ ...retrieval, traceId: 'later', seenAt: at('2026-03-12T11:30:00Z') });
    expect(session.size).toBe(1);
    expect(again?.ref_id).toBe('witness:later');
    expect(session.observe({ ...retrieval, result: { content: [{ type: 'text', text: 'ENOENT' }], isError: true } })).toBeUndefined();
    session.observe({ ...retrieval, args: { path: '/b' }, traceId: 'b' });
    session.observe({ ...retrieval, args: { path: '/c' }, traceId: 'c' });
    expect(session.size).toBe(2);
    expect(session.dropped).toBe(1);
    expect(session.envelope({ contextSetId: 's', createdAt: at('2026-03-12T12:00:00Z') }).records.map((r) => r.ref_id)).toEqual(['witness:b', 'witness:c']);
  });

  it('an empty session has the empty-set digest', () => {
    const env = new WitnessedContext().envelope({ contextSetId: 's', createdAt: at('2026-03-12T12:00:00Z') });
    expect(env.context_set_digest).toBe('4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945');
  });
});
