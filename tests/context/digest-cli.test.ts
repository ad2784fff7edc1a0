import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import type { CliContext } from '../../src/cli/context.js';
import { REPO_ROOT } from './helpers.js';

const V7_RECORDS_CANONICAL =
  '[{"content_digest":"2222222222222222222222222222222222222222222222222222222222222222","immutability":"immutable","query_digest":"1111111111111111111111111111111111111111111111111111111111111111","redaction_mode":"hashes","ref_id":"ctx-a","retrieved_at":"2026-03-12T11:59:55Z","source_locator":"file:///repo/context.md","source_type":"doc"},{"content_digest":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb","freshness_sla_seconds":300,"immutability":"unknown","query_digest":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","redaction_mode":"hashes","ref_id":"ctx-b","retrieval_params":{"q":"x<y","top_k":5},"retrieved_at":"2026-03-12T10:59:00.5Z","sensitivity_label":"internal","source_locator":"docs://b","source_type":"doc_store"}]';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function ward(args: string[], options: { cwd?: string; stdin?: string } = {}): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const ctx: CliContext = {
    argv: ['ward', ...args],
    cwd: options.cwd ?? REPO_ROOT,
    env: {},
    stdout: (s) => void (stdout += s),
    stderr: (s) => void (stderr += s),
    readStdin: async () => options.stdin ?? '',
    isTTY: false,
    exitCode: 0,
  };
  const code = await runCli(args, ctx);
  return { code, stdout, stderr };
}

function scratch(name: string, content: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'ward-digest-'));
  writeFileSync(join(dir, name), content);
  return dir;
}

describe('ward digest <file>', () => {
  it('prints the canonical form and its sha256 (the args_digest of {} is 44136fa3…)', async () => {
    const dir = scratch('args.json', '{ }\n');
    const run = await ward(['digest', 'args.json'], { cwd: dir });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('digest=44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a\ncanonical={}\n');
  });

  it('canonicalizes key order, numbers and escapes (RFC 8785)', async () => {
    const dir = scratch('doc.json', '{"b": [1.50, 1e21, "\\u003c"], "a": {"y": true, "x": null}}');
    const run = await ward(['digest', 'doc.json', '--json'], { cwd: dir });
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(out['canonical']).toBe('{"a":{"x":null,"y":true},"b":[1.5,1e+21,"<"]}');
    expect(out['ok']).toBe(true);
    expect(out['path']).toBe('doc.json');
    expect(out['correlation_id']).toMatch(/^[0-9a-f]{24}$/);
    // One compact line, keys sorted, HTML-escaped like the reference's --json output.
    expect(run.stdout).toMatch(/^\{"canonical":"\{\\"a\\".*\\u003c.*\}\n$/);
  });

  it('reads standard input for "-"', async () => {
    const run = await ward(['digest', '-'], { stdin: '[]' });
    expect(run.stdout).toBe(`digest=4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945\ncanonical=[]\n`);
  });

  it('exits 6 on invalid JSON, with the JSON error envelope under --json', async () => {
    const dir = scratch('bad.json', '{"a":');
    const run = await ward(['digest', 'bad.json', '--json'], { cwd: dir });
    expect(run.code).toBe(6);
    const out = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(out['ok']).toBe(false);
    expect(out['error']).toMatch(/^parse json: /);
    expect(out['error_code']).toBe('invalid_input');
  });

  it('exits 6 on a missing file', async () => {
    const run = await ward(['digest', 'does-not-exist.json'], { cwd: scratch('x.json', '{}') });
    expect(run.code).toBe(6);
    expect(run.stderr).toMatch(/^error: read does-not-exist\.json: /);
  });

  it('exits 6 without input or with both inputs', async () => {
    expect((await ward(['digest'])).code).toBe(6);
    const both = await ward(['digest', 'a.json', '--context-envelope', 'b.json']);
    expect(both.code).toBe(6);
    expect(both.stderr).toBe('error: digest takes either <file> or --context-envelope <file>, not both\n');
  });
});

describe('ward digest --context-envelope <file>', () => {
  it('verifies the V7 envelope and prints its recomputed digest and canonical records', async () => {
    const run = await ward(['digest', '--context-envelope', 'fixtures/envelopes/v7-envelope.json']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      [
        'context_set_id=ctx-set-1',
        'context_set_digest=793f36e5bd721ca7a293f211a10b3cb51f789445429848aaa16e0414eab8128f',
        'evidence_mode=required',
        'record_count=2',
        `records_canonical=${V7_RECORDS_CANONICAL}`,
        '',
      ].join('\n'),
    );
  });

  it('prints the same facts as JSON', async () => {
    const run = await ward(['digest', '--context-envelope', 'fixtures/envelopes/unknown-fields.json', '--json']);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(out).toMatchObject({
      ok: true,
      context_set_digest: '793f36e5bd721ca7a293f211a10b3cb51f789445429848aaa16e0414eab8128f',
      evidence_mode: 'required',
      record_count: 2,
      records_canonical: V7_RECORDS_CANONICAL,
    });
  });

  it('exits 6 with the contract message on a digest mismatch', async () => {
    const run = await ward(['digest', '--context-envelope', 'fixtures/envelopes/mismatch.json', '--json']);
    expect(run.code).toBe(6);
    const out = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(out['error']).toBe('context_set_digest mismatch');
    expect(out['error_category']).toBe('invalid_input');
  });

  it('exits 6 on an oversized envelope', async () => {
    const dir = scratch('big.json', ' '.repeat(1048577));
    const run = await ward(['digest', '--context-envelope', 'big.json'], { cwd: dir });
    expect(run.code).toBe(6);
    expect(run.stderr).toBe('error: context envelope exceeds size limit (1048576 bytes)\n');
  });
});
