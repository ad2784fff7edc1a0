import type { RegressResult } from './types.js';

/** Go's json.MarshalIndent escapes <, > and & (and U+2028/9); the reference's files carry that. */
function goHtmlEscape(text: string): string {
  return text.replace(/[<>&\u2028\u2029]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `regress_result.json` (§5.4): 2-space indent, struct order, trailing newline. */
export function renderRegressResult(result: RegressResult): string {
  return goHtmlEscape(JSON.stringify(result, null, 2)) + '\n';
}

/** Go `encoding/xml` escaping (attributes and character data alike). */
export function xmlEscape(text: string): string {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    switch (ch) {
      case '"': out += '&#34;'; break;
      case "'": out += '&#39;'; break;
      case '&': out += '&amp;'; break;
      case '<': out += '&lt;'; break;
      case '>': out += '&gt;'; break;
      case '\t': out += '&#x9;'; break;
      case '\n': out += '&#xA;'; break;
      case '\r': out += '&#xD;'; break;
      default:
        // Outside XML's Char production: Go writes U+FFFD.
        out += cp === 0x9 || cp === 0xa || cp === 0xd || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff) ? ch : '\uFFFD';
    }
  }
  return out;
}

export interface JunitCase {
  classname: string;
  name: string;
  /** Set for a failing case: the failure message and body. */
  failure?: string;
}

/**
 * JUnit XML exactly as the reference writes it (§5.5): one suite, one testcase per case, all
 * times "0", 2-space indent, no self-closing elements, trailing newline.
 */
export function renderJunit(suiteName: string, cases: readonly JunitCase[]): string {
  const failures = cases.filter((c) => c.failure !== undefined).length;
  const counts = `tests="${cases.length}" failures="${failures}" errors="0" skipped="0" time="0"`;
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>', `<testsuites ${counts}>`, `  <testsuite name="${xmlEscape(suiteName)}" ${counts}>`];
  for (const c of cases) {
    const open = `    <testcase name="${xmlEscape(c.name)}" classname="${xmlEscape(c.classname)}" time="0">`;
    if (c.failure === undefined) {
      lines.push(`${open}</testcase>`);
    } else {
      const m = xmlEscape(c.failure);
      lines.push(open, `      <failure message="${m}" type="regress_failure">${m}</failure>`, '    </testcase>');
    }
  }
  lines.push('  </testsuite>', '</testsuites>');
  return lines.join('\n') + '\n';
}

/** The JUnit cases of a regress result: classname = fixture, name = grader, message = sorted reason codes or `failed`. */
export function regressJunit(result: RegressResult): string {
  const cases = result.graders.map((g) => {
    const slash = g.name.indexOf('/');
    const c: JunitCase = { classname: g.name.slice(0, slash), name: g.name.slice(slash + 1) };
    if (g.status === 'fail') c.failure = g.reason_codes.length > 0 ? g.reason_codes.join(',') : 'failed';
    return c;
  });
  return renderJunit(`gait.regress.${result.fixture_set}`, cases);
}

/** `top_failure_reason` (§5.6): the first reason of the first failing grader, or `grader_failed`. */
export function topFailureReason(result: RegressResult): string | undefined {
  const failing = result.graders.find((g) => g.status === 'fail');
  if (!failing) return undefined;
  return failing.reason_codes[0] ?? 'grader_failed';
}
