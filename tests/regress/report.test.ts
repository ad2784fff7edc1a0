import { describe, expect, it } from 'vitest';
import { regressJunit, renderJunit, renderRegressResult, topFailureReason, xmlEscape, type RegressResult } from '../../src/regress/index.js';
import { checkJunit, parseXml } from './xml.js';

const RESULT: RegressResult = {
  schema_id: 'gait.regress.result',
  schema_version: '1.0.0',
  created_at: '2026-02-05T10:00:00Z',
  producer_version: '0.1.0',
  fixture_set: 'default',
  status: 'fail',
  graders: [
    { name: 'run_demo/diff', status: 'pass', reason_codes: [], details: {} },
    { name: 'run_demo/expected_exit_code', status: 'fail', reason_codes: ['unexpected_exit_code'], details: {} },
    { name: 'run_demo/schema_validation', status: 'pass', reason_codes: [], details: {} },
    { name: 'run_demo/trajectory', status: 'pass', reason_codes: ['trajectory_match'], details: {} },
  ],
};

describe('JUnit XML (§5.5)', () => {
  it('is byte for byte the reference example', () => {
    expect(regressJunit(RESULT)).toBe(`<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="4" failures="1" errors="0" skipped="0" time="0">
  <testsuite name="gait.regress.default" tests="4" failures="1" errors="0" skipped="0" time="0">
    <testcase name="diff" classname="run_demo" time="0"></testcase>
    <testcase name="expected_exit_code" classname="run_demo" time="0">
      <failure message="unexpected_exit_code" type="regress_failure">unexpected_exit_code</failure>
    </testcase>
    <testcase name="schema_validation" classname="run_demo" time="0"></testcase>
    <testcase name="trajectory" classname="run_demo" time="0"></testcase>
  </testsuite>
</testsuites>
`);
  });

  it('parses as well-formed XML with the JUnit structure and consistent counts', () => {
    expect(checkJunit(regressJunit(RESULT))).toEqual([
      { classname: 'run_demo', name: 'diff' },
      { classname: 'run_demo', name: 'expected_exit_code', failure: 'unexpected_exit_code' },
      { classname: 'run_demo', name: 'schema_validation' },
      { classname: 'run_demo', name: 'trajectory' },
    ]);
  });

  it('joins several reason codes with commas, and says failed when there are none', () => {
    const r: RegressResult = { ...RESULT, graders: [{ name: 'a/trajectory', status: 'fail', reason_codes: ['x_one', 'y_two'], details: {} }, { name: 'b/diff', status: 'fail', reason_codes: [], details: {} }] };
    expect(checkJunit(regressJunit(r)).map((c) => c.failure)).toEqual(['x_one,y_two', 'failed']);
  });

  it('escapes like Go encoding/xml, and the escapes round-trip through a parser', () => {
    expect(xmlEscape(`a<b>&"c"'d'\te\nf\rg\u0001`)).toBe('a&lt;b&gt;&amp;&#34;c&#34;&#39;d&#39;&#x9;e&#xA;f&#xD;g\uFFFD');
    const text = `<&>"' tab\tline\n`;
    const xml = renderJunit('s', [{ classname: text, name: 'n', failure: text }]);
    expect(checkJunit(xml)[0]).toEqual({ classname: text, name: 'n', failure: text });
  });

  it('the checker rejects malformed XML', () => {
    const ok = regressJunit(RESULT);
    for (const bad of [ok.replace('</testsuite>', ''), ok.replace('name="diff"', 'name="diff" name="x"'), ok.replace('run_demo', 'run&demo'), ok.replace('<?xml', '<?xmx')]) {
      expect(() => checkJunit(bad)).toThrow();
    }
    expect(() => parseXml('<?xml version="1.0" encoding="UTF-8"?>\n<a><b></a></b>')).toThrow(/closes/);
  });
});

describe('regress_result.json (§5.4)', () => {
  it('is pretty JSON in struct order with a trailing newline and Go HTML escaping', () => {
    const text = renderRegressResult({ ...RESULT, graders: [{ name: 'x/diff', status: 'pass', reason_codes: [], details: { note: '<&>' } }] });
    expect(text.endsWith('}\n')).toBe(true);
    expect(Object.keys(JSON.parse(text))).toEqual(['schema_id', 'schema_version', 'created_at', 'producer_version', 'fixture_set', 'status', 'graders']);
    expect(text).toContain('"note": "\\u003c\\u0026\\u003e"');
    expect(JSON.parse(text).graders[0].details.note).toBe('<&>');
  });

  it('top_failure_reason is the first reason of the first failing grader', () => {
    expect(topFailureReason(RESULT)).toBe('unexpected_exit_code');
    expect(topFailureReason({ ...RESULT, graders: [{ name: 'a/b', status: 'fail', reason_codes: [], details: {} }] })).toBe('grader_failed');
    expect(topFailureReason({ ...RESULT, status: 'pass', graders: [] })).toBeUndefined();
  });
});
