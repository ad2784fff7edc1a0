import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/contract/exit-codes.js';
import { ERROR_CODES, WardError } from '../../src/errors.js';
import { parsePolicyYaml } from '../../src/policy/index.js';

function failure(text: string): WardError {
  try {
    parsePolicyYaml(text);
  } catch (err) {
    if (err instanceof WardError) return err;
    throw err;
  }
  throw new Error('expected the policy to be rejected');
}

describe('strict policy YAML decoding (gate.md §2.1)', () => {
  it('rejects an unknown key at the top level with its position', () => {
    const err = failure('default_verdict: allow\nbogus_key: 1\n');
    expect(err.message).toBe('parse policy yaml: [2:1] unknown field "bogus_key"');
    expect(err.code).toBe(ERROR_CODES.POLICY_PARSE);
    expect(err.exitCode).toBe(EXIT.INVALID_INPUT);
  });

  it('rejects an unknown key inside match at the reference position [7:7]', () => {
    const text = [
      'schema_id: gait.gate.policy',
      'schema_version: 1.0.0',
      'default_verdict: block',
      'rules:',
      '  - name: r1',
      '    match:',
      '      bogus_key: true',
      '    effect: allow',
      '',
    ].join('\n');
    expect(failure(text).message).toBe('parse policy yaml: [7:7] unknown field "bogus_key"');
  });

  it('rejects unknown keys in every nested block', () => {
    expect(failure('fail_closed:\n  enabled: true\n  risk: [high]\n').message).toBe('parse policy yaml: [3:3] unknown field "risk"');
    expect(failure('rules:\n  - name: r\n    effect: allow\n    endpoint:\n      deny: [x]\n').message).toBe(
      'parse policy yaml: [5:7] unknown field "deny"',
    );
    expect(
      failure('rules:\n  - name: r\n    effect: allow\n    freeze_window:\n      windows:\n        - begin: x\n').message,
    ).toBe('parse policy yaml: [6:11] unknown field "begin"');
  });

  it('matches keys case-sensitively (tool_annotations keys are camelCase)', () => {
    expect(failure('rules:\n  - name: r\n    effect: allow\n    match:\n      tool_annotations:\n        read_only_hint: true\n').message).toBe(
      'parse policy yaml: [6:9] unknown field "read_only_hint"',
    );
    expect(failure('Default_Verdict: allow\n').message).toBe('parse policy yaml: [1:1] unknown field "Default_Verdict"');
  });

  it('counts columns in code points', () => {
    expect(failure('rules:\n  - {name: "😀😀", effect: allow, bogus: 1}\n').message).toBe(
      'parse policy yaml: [2:33] unknown field "bogus"',
    );
  });

  it('rejects a duplicate key with both positions', () => {
    expect(failure('default_verdict: allow\ndefault_verdict: block\n').message).toBe(
      'parse policy yaml: [2:1] mapping key "default_verdict" already defined at [1:1]',
    );
    expect(failure('rules:\n  - name: a\n    effect: allow\n    name: b\n').message).toBe(
      'parse policy yaml: [4:5] mapping key "name" already defined at [2:5]',
    );
  });

  it('reports duplicate keys before legacy keys, and legacy keys before unknown keys', () => {
    expect(failure('name: x\nname: y\n').message).toMatch(/^parse policy yaml: \[2:1\] mapping key "name" already defined/);
    expect(failure('bogus: 1\nversion: 1\n').code).toBe(ERROR_CODES.POLICY_LEGACY);
  });

  it('keeps schema_version 1.0.0 a string', () => {
    expect(parsePolicyYaml('schema_version: 1.0.0\n').policy.schema_version).toBe('1.0.0');
  });

  it('rejects a number where a string field is expected', () => {
    expect(failure('schema_version: 1\n').message).toBe(
      'parse policy yaml: [1:17] schema_version must be a string, got the integer 1',
    );
    expect(failure('rules:\n  - name: 42\n    effect: allow\n').message).toBe(
      'parse policy yaml: [2:11] rules[0].name must be a string, got the integer 42',
    );
  });

  it('rejects strings, fractions and booleans where an integer is expected', () => {
    expect(failure('rules:\n  - name: r\n    effect: allow\n    priority: "10"\n').message).toBe(
      'parse policy yaml: [4:15] rules[0].priority must be an integer, got the string "10"',
    );
    expect(failure('rules:\n  - name: r\n    effect: allow\n    priority: 1.5\n').message).toBe(
      'parse policy yaml: [4:15] rules[0].priority must be an integer, got the number 1.5',
    );
    expect(failure('scripts:\n  max_steps: true\n').message).toBe(
      'parse policy yaml: [2:14] scripts.max_steps must be an integer, got the boolean true',
    );
  });

  it('rejects integers beyond the exactly representable range', () => {
    expect(failure('scripts:\n  max_steps: 99999999999999999999\n').message).toBe(
      'parse policy yaml: [2:14] scripts.max_steps is out of range',
    );
  });

  it('accepts YAML 1.2 integer spellings', () => {
    expect(parsePolicyYaml('scripts:\n  max_steps: 0x10\n').policy.scripts.max_steps).toBe(16);
  });

  it('accepts an integer where a number is expected', () => {
    expect(parsePolicyYaml('mcp_trust:\n  snapshot: s.json\n  min_score: 1\n').policy.mcp_trust.min_score).toBe(1);
  });

  it('rejects a string where a boolean is expected (YAML 1.2: yes is a string)', () => {
    expect(failure('fail_closed:\n  enabled: yes\n').message).toBe(
      'parse policy yaml: [2:12] fail_closed.enabled must be a boolean (true or false), got the string "yes"',
    );
  });

  it('rejects a scalar where a list is expected, and a list where a mapping is expected', () => {
    expect(failure('rules:\n  - name: r\n    effect: allow\n    match:\n      endpoint_class: fs.write\n').message).toBe(
      'parse policy yaml: [5:23] rules[0].match.endpoint_class must be a list of strings, got the string "fs.write"',
    );
    expect(failure('rules:\n  - name: r\n    effect: allow\n    match: [a]\n').message).toBe(
      'parse policy yaml: [4:12] rules[0].match must be a mapping, got a list',
    );
    expect(failure('rules:\n  - name: r\n    effect: allow\n    reason_codes: [ok, [nested]]\n').message).toBe(
      'parse policy yaml: [4:24] rules[0].reason_codes[1] must be a string, got a list',
    );
    expect(failure('rules: {name: r}\n').message).toBe('parse policy yaml: [1:8] rules must be a list of mappings, got a mapping');
  });

  it('rejects a document that is not a mapping', () => {
    expect(failure('- a\n- b\n').message).toBe('parse policy yaml: [1:1] policy must be a mapping, got a list');
    expect(failure('just text\n').message).toBe('parse policy yaml: [1:1] policy must be a mapping, got the string "just text"');
  });

  it('treats null and empty values as Go zero values', () => {
    const loaded = parsePolicyYaml('default_verdict:\nfail_closed: ~\nrules:\n  - name: r\n    effect: allow\n    match:\n    reason_codes: [~, a]\n');
    expect(loaded.policy.default_verdict).toBe('require_approval');
    expect(loaded.policy.rules[0]?.reason_codes).toEqual(['a']);
    expect(loaded.policy.rules[0]?.match.tool_names).toEqual([]);
  });

  it('reports YAML syntax errors with a position', () => {
    expect(failure('default_verdict: allow\nrules: [\n').message).toMatch(/^parse policy yaml: \[2:8\] this \[ is never closed \(the parser stopped at \[3:1\]: \S/);
    expect(failure('default_verdict: allow\na: b: c\n').message).toMatch(/^parse policy yaml: \[2:4\] \S/);
  });

  it('rejects more than one YAML document', () => {
    expect(failure('default_verdict: allow\n---\ndefault_verdict: block\n').message).toMatch(/^parse policy yaml: \[\d+:\d+\] .*multiple documents/);
  });

  it('resolves aliases and merge keys, with explicit keys winning over merged ones', () => {
    const text = [
      'rules:',
      '  - name: a',
      '    effect: allow',
      '    match: &safe',
      '      tool_names: [tool.read]',
      '      risk_classes: [low]',
      '  - name: b',
      '    effect: block',
      '    match:',
      '      <<: *safe',
      '      risk_classes: [high]',
      '    reason_codes: *codes',
      'x_unused: &codes [c1]',
      '',
    ].join('\n');
    // The anchor for *codes comes after its use, so it does not resolve: fail closed.
    expect(failure(text).message).toMatch(/^parse policy yaml: /);
    const ok = text.replace('    reason_codes: *codes\nx_unused: &codes [c1]\n', '');
    const rules = parsePolicyYaml(ok).policy.rules;
    expect(rules[1]?.match.tool_names).toEqual(['tool.read']);
    expect(rules[1]?.match.risk_classes).toEqual(['high']);
  });

  it('reports an unknown key in a flow mapping at its own column', () => {
    expect(failure('rules:\n  - &r {name: a, effect: allow, bogus: 1}\n').message).toBe(
      'parse policy yaml: [2:33] unknown field "bogus"',
    );
  });

  it('rejects a merge of something other than a mapping', () => {
    expect(failure('rules:\n  - name: a\n    effect: allow\n    match:\n      <<: [x]\n').message).toBe(
      'parse policy yaml: [5:12] merge key "<<" needs a mapping or a list of mappings',
    );
  });

  it('rejects an alias bomb (many aliases to a large anchor)', () => {
    const codes = Array.from({ length: 1000 }, (_, i) => `c${i}`).join(', ');
    const aliases = Array.from({ length: 150 }, () => '*r').join(', ');
    const bomb = `rules: [&r {name: a, effect: allow, reason_codes: [${codes}]}, ${aliases}]\n`;
    expect(failure(bomb).message).toMatch(/^parse policy yaml: \[1:\d+\] excessive alias expansion$/);
    const modest = `rules: [&r {name: a, effect: allow, reason_codes: [${codes}]}, *r, *r]\n`;
    expect(parsePolicyYaml(modest).policy.rules).toHaveLength(3);
  });
});

describe('legacy policy proposal fields (gate.md §2.1)', () => {
  it('names the legacy fields in reference order with the replacement guidance', () => {
    const err = failure('name: my-policy\nversion: 1\ndefault_verdict: allow\n');
    expect(err.code).toBe(ERROR_CODES.POLICY_LEGACY);
    expect(err.exitCode).toBe(EXIT.INVALID_INPUT);
    expect(err.message).toBe(
      'parse policy yaml: legacy policy proposal fields are not supported [version, name]: version->schema_id|schema_version (set schema_id=gait.gate.policy and schema_version=1.0.0); name->remove the top-level policy name',
    );
    expect(err.hint).toBe(
      'use the repo-root `.ward.yaml` contract: `schema_id`, `schema_version`, `default_verdict`, optional `fail_closed`, optional `mcp_trust`, and `rules`',
    );
    expect(err.details).toEqual({
      migration: {
        kind: 'policy_fields',
        deprecated_fields: ['version', 'name'],
        field_replacements: [
          {
            field: 'version',
            replacement_fields: ['schema_id', 'schema_version'],
            note: 'set schema_id=gait.gate.policy and schema_version=1.0.0',
          },
          { field: 'name', replacement_fields: [], note: 'remove the top-level policy name' },
        ],
      },
    });
  });

  it('recognises all six legacy keys', () => {
    const err = failure('unknown_server: block\ntrust_sources: []\ndefaults: {}\nboundaries: []\n');
    expect((err.details?.['migration'] as { deprecated_fields: string[] }).deprecated_fields).toEqual([
      'boundaries',
      'defaults',
      'trust_sources',
      'unknown_server',
    ]);
  });

  it('checks legacy keys before type errors', () => {
    expect(failure('version: 1\nrules: 5\n').code).toBe(ERROR_CODES.POLICY_LEGACY);
  });
});
