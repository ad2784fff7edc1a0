import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { formatPolicyYaml, parsePolicyYaml, policyDigestPayload } from '../../src/policy/index.js';
import { REPO } from '../cli/run.js';

const FULL = `default_verdict: allow
results:
  credentials: { action: redact }
  invisible: { action: Block }
  pii:
    action: redact
    patterns:
      - { name: us_ssn, regex: '\\b\\d{3}-\\d{2}-\\d{4}\\b' }
      - { name: email, regex: '[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}' }
  oversize: { action: block, max_bytes: 200000 }
context:
  retrieval_tools: [Read_File, fetch, read_file]
`;

function errorOf(text: string): { code: string; message: string } {
  try {
    parsePolicyYaml(text);
  } catch (err) {
    const e = err as { code: string; message: string };
    return { code: e.code, message: e.message };
  }
  throw new Error('expected the policy to be refused');
}

describe('results and context policy sections', () => {
  it('normalize: actions lowercased, patterns sorted by name, tools lowercased and deduplicated', () => {
    const { policy } = parsePolicyYaml(FULL);
    expect(policy.results).toEqual({
      enabled: true,
      credentials: { enabled: true, action: 'redact' },
      invisible: { enabled: true, action: 'block' },
      pii: {
        enabled: true,
        action: 'redact',
        patterns: [
          { name: 'email', regex: '[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}' },
          { name: 'us_ssn', regex: '\\b\\d{3}-\\d{2}-\\d{4}\\b' },
        ],
      },
      oversize: { enabled: true, action: 'block', max_bytes: 200000 },
    });
    expect(policy.context).toEqual({ enabled: true, retrieval_tools: ['fetch', 'read_file'] });
  });

  it('are off when absent, and oversize defaults to 1 MiB', () => {
    const { policy } = parsePolicyYaml('default_verdict: allow\n');
    expect(policy.results.enabled).toBe(false);
    expect(policy.context).toEqual({ enabled: false, retrieval_tools: [] });
    expect(parsePolicyYaml('results: {oversize: {action: redact}}\n').policy.results.oversize.max_bytes).toBe(1048576);
    expect(parsePolicyYaml('results: {credentials: {action: pass}}\n').policy.results.enabled).toBe(true);
  });

  it('a policy without them keeps its digest; with them the digest covers them', () => {
    const plain = 'default_verdict: require_approval\n';
    expect(parsePolicyYaml(plain).digest).toBe('07a528a879e4f0e0cd5a0e2ca801924746b47dac624862207ef21d4ec266f8f9');
    expect(parsePolicyYaml(`${plain}results: {}\ncontext: {retrieval_tools: []}\n`).digest).toBe(
      '07a528a879e4f0e0cd5a0e2ca801924746b47dac624862207ef21d4ec266f8f9',
    );
    const full = parsePolicyYaml(FULL);
    expect(Object.keys(policyDigestPayload(full.policy))).toEqual(expect.arrayContaining(['Results', 'Context']));
    const other = parsePolicyYaml(FULL.replace('max_bytes: 200000', 'max_bytes: 200001'));
    expect(other.digest).not.toBe(full.digest);
    const noContext = parsePolicyYaml(FULL.replace(/context:\n.*\n/, ''));
    expect(noContext.digest).not.toBe(full.digest);
  });

  it('every shipped and fixture policy keeps its digest (neither section is set in them)', () => {
    for (const dir of ['policies', join('fixtures', 'policies')]) {
      for (const file of readdirSync(join(REPO, dir)).filter((f) => f.endsWith('.yaml'))) {
        const { policy } = parsePolicyYaml(readFileSync(join(REPO, dir, file), 'utf8'));
        const payload = policyDigestPayload(policy);
        expect(payload).not.toHaveProperty('Results');
        expect(payload).not.toHaveProperty('Context');
      }
    }
  });

  it('the JSON Schema (editor aid) accepts them and refuses a bad action or key', () => {
    const schema = JSON.parse(readFileSync(join(REPO, 'schemas', 'gait.gate.policy.schema.json'), 'utf8')) as object;
    const validate = new Ajv2020({ strict: true }).compile(schema);
    expect(validate(parse(FULL.replace('Block', 'block'))), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ results: { credentials: { action: 'allow' } } })).toBe(false);
    expect(validate({ context: { retrieval_tool: ['x'] } })).toBe(false);
  });

  it('ward policy fmt writes them back and re-parsing gives the same digest', () => {
    const loaded = parsePolicyYaml(FULL);
    const text = formatPolicyYaml(loaded.policy);
    expect(text).toContain('results:');
    expect(text).toContain('retrieval_tools:');
    expect(parsePolicyYaml(text).digest).toBe(loaded.digest);
  });

  it.each([
    ['results: {bogus: {action: redact}}\n', 'ERR_POLICY_PARSE', 'unknown field "bogus"'],
    ['results: {credentials: {action: redact, extra: 1}}\n', 'ERR_POLICY_PARSE', 'unknown field "extra"'],
    ['context: {retrieval_tool: [a]}\n', 'ERR_POLICY_PARSE', 'unknown field "retrieval_tool"'],
    ['results: {credentials: {action: allow}}\n', 'ERR_POLICY_INVALID', 'unsupported results.credentials.action "allow"'],
    ['results: {credentials: {action: [redact]}}\n', 'ERR_POLICY_PARSE', 'must be a string'],
    ['results: {oversize: {max_bytes: 10}}\n', 'ERR_POLICY_INVALID', 'results.oversize.action is required'],
    ['results: {oversize: {action: block, max_bytes: -1}}\n', 'ERR_POLICY_INVALID', 'max_bytes must be > 0'],
    ['results: {oversize: {action: block, max_bytes: 1.5}}\n', 'ERR_POLICY_PARSE', 'must be an integer'],
    ['results: {pii: {action: redact}}\n', 'ERR_POLICY_INVALID', 'results.pii.patterns is required'],
    ['results: {pii: {patterns: [{name: a, regex: x}]}}\n', 'ERR_POLICY_INVALID', 'results.pii.action is required'],
    ["results: {pii: {action: redact, patterns: [{name: a, regex: '(unclosed'}]}}\n", 'ERR_POLICY_INVALID', 'does not compile'],
    ["results: {pii: {action: redact, patterns: [{name: a, regex: 'x*'}]}}\n", 'ERR_POLICY_INVALID', 'matches the empty string'],
    ["results: {pii: {action: redact, patterns: [{name: a, regex: ''}]}}\n", 'ERR_POLICY_INVALID', 'regex is required'],
    ["results: {pii: {action: redact, patterns: [{name: Bad-Name, regex: x}]}}\n", 'ERR_POLICY_INVALID', 'must match [a-z0-9_]{1,64}'],
    ["results: {pii: {action: redact, patterns: [{name: a, regex: x}, {name: a, regex: y}]}}\n", 'ERR_POLICY_INVALID', 'used twice'],
    ['context: {retrieval_tools: ["  "]}\n', 'ERR_POLICY_INVALID', 'lists no tool name'],
  ])('refuses %j', (text, code, message) => {
    const err = errorOf(text);
    expect(err.code).toBe(code);
    expect(err.message).toContain(message);
  });

  it('a bad regex error does not echo the pattern', () => {
    const err = errorOf("results: {pii: {action: redact, patterns: [{name: a, regex: 'secret-ish(['}]}}\n");
    expect(err.message).not.toContain('secret-ish');
  });
});

describe('results.pii regexes against catastrophic backtracking', () => {
  const refused = (regex: string) => {
    try {
      parsePolicyYaml(`results: {pii: {action: redact, patterns: [{name: p, regex: '${regex}'}]}}\n`);
      return false;
    } catch (err) {
      return /repeats a group that itself repeats without bound/.test((err as Error).message);
    }
  };
  it.each(['(a+)+', '(\\w+\\s?)*x', '((a)+)+', '(a{2,})*b', '(?:[a-z]+\\.)+[a-z]{2,}'])('refuses %s', (re) => expect(refused(re)).toBe(true));
  it.each(['(\\d{3}-){2}\\d{4}', '\\b\\d{3}-\\d{2}-\\d{4}\\b', '[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}', '(ab)+', '\\(a+\\)+', '([+-]\\d)+', '(?:[a-z]{1,63}\\.){1,8}'])(
    'accepts %s',
    (re) => expect(refused(re)).toBe(false),
  );
});
