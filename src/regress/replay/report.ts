import { renderJunit, type JunitCase } from '../report.js';
import type { ChangeCounts, ReplayReport } from './replay.js';

const MAX_ROWS = 50;

/** The replay report as a file: 2-space JSON with a trailing newline. */
export function renderReplayJson(report: ReplayReport): string {
  return JSON.stringify(report, null, 2) + '\n';
}

/**
 * JUnit: one testcase per tool (classname `policy_replay`), failing when any of its decisions got
 * looser and loosening is not allowed; the message counts them.
 */
export function renderReplayJunit(report: ReplayReport): string {
  const cases: JunitCase[] = Object.entries(report.by_tool).map(([tool, c]) => {
    const tc: JunitCase = { classname: 'policy_replay', name: tool || '(unknown tool)' };
    if (c.loosened > 0 && !report.allow_loosening) tc.failure = `policy_loosened: ${c.loosened} of ${c.replayed} decisions`;
    return tc;
  });
  return renderJunit('ward.regress.replay', cases);
}

/** A Markdown summary for a pull-request comment. */
export function renderReplayMarkdown(report: ReplayReport): string {
  const s = report.summary;
  const baseline = report.baseline === 'recorded' ? 'the recorded decisions' : `baseline policy \`${report.baseline.slice(0, 12)}\``;
  const lines: string[] = [`## Policy replay: candidate \`${report.candidate_policy_digest.slice(0, 12)}\` vs ${baseline}`, ''];
  if (s.loosened > 0) {
    lines.push(
      report.status === 'fail'
        ? `**FAIL: ${s.loosened} decision${s.loosened === 1 ? '' : 's'} would get looser** (block, require_approval or dry_run → allow).`
        : `**${s.loosened} decision${s.loosened === 1 ? '' : 's'} would get looser** (allowed with --allow-loosening).`,
    );
  } else lines.push('**PASS: no decision gets looser.**');
  lines.push(
    '',
    '| replayed | unchanged | loosened | tightened | verdict changed | reasons changed | errors | not replayable |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| ${s.replayed} | ${s.unchanged} | ${s.loosened} | ${s.tightened} | ${s.verdict_changed} | ${s.reasons_changed} | ${s.error} | ${s.not_replayable} |`,
  );
  const transitions = Object.entries(report.transitions);
  if (transitions.length > 0) {
    lines.push('', '### Verdict transitions', '', '| from → to | decisions |', '|---|---:|');
    for (const [key, n] of transitions) lines.push(`| ${key.replace('->', ' → ')} | ${n} |`);
  }
  for (const [title, kind] of [
    ['Loosened', 'policy_loosened'],
    ['Tightened', 'policy_tightened'],
    ['Other verdict changes', 'verdict_changed'],
    ['Errors', 'replay_evaluation_error'],
  ] as const) {
    const rows = report.changes.filter((c) => c.change === kind);
    if (rows.length === 0) continue;
    lines.push('', `### ${title} (${rows.length})`, '', '| tool | rule (candidate) | verdict | reasons added | reasons removed | decision |', '|---|---|---|---|---|---|');
    for (const e of rows.slice(0, MAX_ROWS)) {
      lines.push(
        `| ${cell(e.tool_name)} | ${cell(e.candidate.matched_rule || '(default)')} | ${e.baseline.verdict} → ${e.candidate.verdict} | ${codes(e.reasons_added)} | ${codes(e.reasons_removed)} | \`${cell(e.id)}\` |`,
      );
    }
    if (rows.length > MAX_ROWS) lines.push('', `…and ${rows.length - MAX_ROWS} more (see the JSON report).`);
  }
  const reasonOnly = report.changes.filter((c) => c.change === 'reasons_changed').length;
  if (reasonOnly > 0) lines.push('', `${reasonOnly} decision${reasonOnly === 1 ? '' : 's'} kept the verdict with other reason codes (see the JSON report).`);
  lines.push('', ...groupTable('By tool', 'tool', report.by_tool), '', ...groupTable('By rule (candidate)', 'rule', report.by_rule));
  if (report.not_replayable.length > 0) {
    const byCode = new Map<string, number>();
    for (const n of report.not_replayable) byCode.set(n.reason_code, (byCode.get(n.reason_code) ?? 0) + 1);
    lines.push('', '### Not replayable', '', '| reason | records |', '|---|---:|');
    for (const [code, n] of [...byCode].sort()) lines.push(`| \`${code}\` | ${n} |`);
  }
  return lines.join('\n') + '\n';
}

function groupTable(title: string, what: string, groups: Record<string, ChangeCounts>): string[] {
  const lines = [`### ${title}`, '', `| ${what} | replayed | loosened | tightened | other changes | unchanged |`, '|---|---:|---:|---:|---:|---:|'];
  for (const [key, c] of Object.entries(groups)) {
    lines.push(`| ${cell(key)} | ${c.replayed} | ${c.loosened} | ${c.tightened} | ${c.verdict_changed + c.reasons_changed + c.error} | ${c.unchanged} |`);
  }
  return lines;
}

function codes(list: readonly string[]): string {
  return list.length === 0 ? '' : list.map((c) => `\`${c}\``).join(' ');
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/[\r\n]+/g, ' ');
}
