// The policy in force, its rules with how often each matched, `ward check` findings, and a preview
// of what a candidate policy would change in recorded decisions, loosenings first.
import { api } from './api.js';
import { $, codes, errorText, h, replace, status, time, verdictBadge } from './dom.js';
import { markNav, startSession } from './shell.js';

/** How permissive a verdict is; a change to a higher rank loosens. */
const RANK = { block: 0, require_approval: 1, dry_run: 2, allow: 3 };

function fact(label, value) {
  return [h('dt', { text: label }), h('dd', {}, value ?? h('span', { class: 'muted', text: '—' }))];
}

function renderPolicy(p) {
  replace(
    $('#policy-facts'),
    fact('Digest', h('code', { text: p.policy_digest ?? p.digest ?? '' })),
    fact('Source', h('code', { text: p.source ?? p.policy_path ?? '' })),
    fact('Loaded at', time(p.loaded_at)),
    fact('Default verdict', p.default_verdict ? verdictBadge(p.default_verdict) : undefined),
  );
  replace(
    $('#rules'),
    (p.rules ?? []).map((r) => h('tr', { dataset: { rule: r.name } }, h('td', { class: 'num', text: r.priority ?? '' }), h('td', {}, h('code', { text: r.name })), h('td', {}, verdictBadge(r.effect)), h('td', { class: 'num', text: r.hits ?? 0 }))),
  );
  const findings = p.findings ?? p.check?.findings ?? [];
  replace(
    $('#findings'),
    findings.length ? findings.map((f) => h('li', { class: f.severity ?? f.level ?? '' }, h('code', { text: f.code ?? f.id ?? '' }), ' ', f.message ?? '')) : h('li', { class: 'muted', text: 'no findings' }),
  );
}

function direction(c) {
  if (c.change) return c.change;
  const a = RANK[c.before?.verdict ?? c.old_verdict];
  const b = RANK[c.after?.verdict ?? c.new_verdict];
  return a === undefined || b === undefined || a === b ? 'same' : b > a ? 'loosen' : 'tighten';
}

function renderPreview(r) {
  const changes = (r.changes ?? []).map((c) => ({ ...c, dir: direction(c) }));
  // Loosenings first: they are what a reviewer must not miss. Stable within each group.
  const order = { loosen: 0, tighten: 1, same: 2 };
  changes.sort((a, b) => (order[a.dir] ?? 3) - (order[b.dir] ?? 3));
  const loosened = changes.filter((c) => c.dir === 'loosen').length;
  const summary = h('p', { id: 'preview-summary' }, `${r.replayed ?? r.total ?? '?'} recorded decisions replayed; ${changes.length} would change`, loosened ? h('strong', { class: 'sig-bad', text: ` (${loosened} loosened)` }) : '', '.');
  if (changes.length === 0) return [summary];
  const table = h(
    'table',
    { class: 'changes' },
    h('thead', {}, h('tr', {}, ['Change', 'Decision', 'Tool', 'Before', 'After', 'Reason codes after'].map((t) => h('th', { text: t })))),
    h(
      'tbody',
      {},
      changes.map((c) =>
        h(
          'tr',
          { class: c.dir, dataset: { dir: c.dir } },
          h('td', { text: c.dir === 'loosen' ? 'loosens' : c.dir === 'tighten' ? 'tightens' : 'changes' }),
          h('td', {}, c.id ? h('a', { href: `/ui/decision?id=${encodeURIComponent(c.id)}`, text: c.id.slice(0, 12) }) : ''),
          h('td', {}, h('code', { text: c.tool_name ?? '' })),
          h('td', {}, verdictBadge(c.before?.verdict ?? c.old_verdict), ' ', h('code', { class: 'muted', text: c.before?.matched_rule ?? '' })),
          h('td', {}, verdictBadge(c.after?.verdict ?? c.new_verdict), ' ', h('code', { class: 'muted', text: c.after?.matched_rule ?? '' })),
          h('td', {}, codes(c.after?.reason_codes ?? c.new_reason_codes)),
        ),
      ),
    ),
  );
  return [summary, table];
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
  try {
    renderPolicy(await api.policy());
  } catch (err) {
    status(errorText(err), 'error');
  }
}

main();
