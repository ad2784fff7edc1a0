// The policy in force, its rules with how often each matched, `ward check` findings and gap warnings, and a preview
// of what a candidate policy would change in recorded decisions, loosenings first.
import { api } from './api.js';
import { $, codes, errorText, h, replace, status, time, verdictBadge } from './dom.js';
import { liveFeed, markNav, startSession } from './shell.js';

function fact(label, value) {
  return [h('dt', { text: label }), h('dd', {}, value ?? h('span', { class: 'muted', text: '—' }))];
}

/** `ward check`'s report, as the CLI prints it: findings per rule, then policy-wide gap warnings. */
function findingsList(r) {
  const findings = r.findings ?? [];
  const gaps = r.gap_warnings ?? [];
  if (findings.length === 0 && gaps.length === 0) return [h('li', { class: 'muted', text: 'no findings' })];
  const fix = (text) => (text ? h('div', { class: 'muted small', text: `fix: ${text}` }) : null);
  return [
    ...findings.map((f) => h('li', { class: 'warning', dataset: { kind: f.kind } }, h('code', { text: f.kind }), ' ', f.rule ? h('code', { text: f.rule }) : null, ` ${f.message}`, fix(f.fix))),
    ...gaps.map((g) => h('li', { class: 'warning gap', dataset: { gap: g.code } }, h('span', { class: 'muted small', text: 'gap warning ' }), h('code', { text: g.code }), ` ${g.message}`, fix(g.fix))),
  ];
}

function renderPolicy(p) {
  replace(
    $('#policy-facts'),
    fact('Digest', h('code', { text: p.policy_digest })),
    fact('Source', h('span', {}, p.source, p.source_path ? [' ', h('code', { text: p.source_path })] : null)),
    fact('Loaded at', time(p.loaded_at)),
    fact('Default verdict', h('span', {}, verdictBadge(p.default_verdict), h('span', { class: 'muted', text: ` — ${p.default_hits ?? 0} decisions matched no rule` }))),
    fact('Hits counted since', time(p.hits_since)),
  );
  replace(
    $('#rules'),
    (p.rules ?? []).map((r) =>
      h(
        'tr',
        { dataset: { rule: r.name } },
        h('td', { class: 'num', text: r.priority }),
        h('td', {}, h('code', { text: r.name })),
        h('td', {}, verdictBadge(r.effect), r.min_approvals > 1 ? h('span', { class: 'muted small', text: ` ×${r.min_approvals}` }) : null),
        h('td', { class: 'num', text: r.hits ?? 0 }),
      ),
    ),
  );
  replace($('#findings'), findingsList(p));
}

const LABEL = {
  policy_loosened: 'loosens',
  policy_tightened: 'tightens',
  verdict_changed: 'verdict changes',
  reasons_changed: 'reasons change',
  replay_evaluation_error: 'cannot evaluate',
};

function renderPreview(r) {
  const s = r.summary ?? {};
  const changes = r.changes ?? []; // the daemon orders them: loosenings first
  const summary = h(
    'p',
    { id: 'preview-summary' },
    `${s.replayed ?? 0} recorded decisions replayed (${s.not_replayable ?? 0} without a capture): `,
    s.loosened ? h('strong', { class: 'sig-bad', text: `${s.loosened} loosened` }) : '0 loosened',
    `, ${s.tightened ?? 0} tightened, ${s.verdict_changed ?? 0} other verdict changes, ${s.reasons_changed ?? 0} reason changes. Nothing was activated.`,
  );
  const out = [summary];
  if (r.hint) out.push(h('p', { class: 'muted', text: r.hint }));
  if (changes.length > 0) {
    out.push(
      h(
        'table',
        { class: 'changes' },
        h('thead', {}, h('tr', {}, ['Change', 'Decision', 'Tool', 'Before', 'After', 'Reason codes added'].map((t) => h('th', { text: t })))),
        h(
          'tbody',
          {},
          changes.map((c) =>
            h(
              'tr',
              { class: c.change === 'policy_loosened' ? 'loosen' : c.change === 'policy_tightened' ? 'tighten' : undefined, dataset: { change: c.change } },
              h('td', { text: LABEL[c.change] ?? c.change }),
              h('td', {}, h('a', { href: `/ui/decision?id=${encodeURIComponent(c.id)}`, text: String(c.id).slice(0, 12) }), ' ', time(c.evaluation_time)),
              h('td', {}, h('code', { text: c.tool_name ?? '' })),
              h('td', {}, verdictBadge(c.from?.verdict), ' ', h('code', { class: 'muted', text: c.from?.matched_rule ?? '' })),
              h('td', {}, verdictBadge(c.to?.verdict), ' ', h('code', { class: 'muted', text: c.to?.matched_rule ?? '' })),
              h('td', {}, codes(c.reasons_added)),
            ),
          ),
        ),
      ),
    );
  }
  out.push(h('h3', { text: 'Findings for the candidate' }), h('ul', { class: 'findings', id: 'preview-findings' }, findingsList(r)));
  return out;
}

async function main() {
  markNav();
  await startSession();
  $('#candidate-file').addEventListener('change', async (e) => {
    const file = e.target.files?.[0];
    if (file) $('#candidate').value = await file.text();
    e.target.value = '';
  });
  $('#preview').addEventListener('submit', async (e) => {
    e.preventDefault();
    const text = $('#candidate').value;
    if (!text.trim()) return status('Paste or choose a candidate policy first.', 'error');
    const button = e.submitter;
    if (button) button.disabled = true;
    status('Replaying recorded decisions…');
    try {
      replace($('#preview-result'), renderPreview(await api.preview(text)));
      status('');
    } catch (err) {
      replace($('#preview-result'));
      status(errorText(err), 'error');
    } finally {
      if (button) button.disabled = false;
    }
  });
  const load = async () => {
    try {
      renderPolicy(await api.policy());
    } catch (err) {
      status(errorText(err), 'error');
    }
  };
  await load();
  // The live feed drives the status badge and keeps hit counts current (at most one reload a second).
  let pending;
  const soon = () => {
    pending ??= setTimeout(() => {
      pending = undefined;
      load();
    }, 1000);
  };
  liveFeed({}, { onOpen: soon, events: { decision: soon } });
}

main().catch((err) => status(errorText(err), 'error'));
