// One decision: its trace fields, whether its signature verifies and with which key, the rule
// that matched, what each reason code means, and the pack that holds it.
import { api } from './api.js';
import { $, errorText, h, replace, status, targetsList, time, verdictBadge } from './dom.js';
import { markNav } from './shell.js';

function fact(label, value) {
  return [h('dt', { text: label }), h('dd', {}, value ?? h('span', { class: 'muted', text: '—' }))];
}

function mono(v) {
  return v ? h('code', { text: v }) : undefined;
}

function signature(sig) {
  if (!sig) return h('span', { class: 'muted', text: 'unknown' });
  return h('span', {}, h('span', { class: sig.ok ? 'sig-ok' : 'sig-bad', text: sig.ok ? 'verified' : `does not verify${sig.error ? `: ${sig.error}` : ''}` }), sig.key_id ? [' with key ', h('code', { text: sig.key_id })] : null);
}

function reasons(list, meanings) {
  if (!list || list.length === 0) return h('span', { class: 'muted', text: 'none' });
  return h('ul', { class: 'reasons' }, list.map((c) => h('li', {}, h('code', { class: 'reason', text: c }), meanings?.[c] ? ` — ${meanings[c]}` : h('span', { class: 'muted', text: ' — not in the registry' }))));
}

function render(d) {
  const t = d.trace ?? {};
  const meanings = Object.fromEntries((d.reason_code_meanings ?? d.reasons ?? []).map((r) => [r.code, r.meaning ?? r.summary ?? r.description]));
  const packs = d.packs ?? [];
  return h(
    'div',
    {},
    h(
      'dl',
      { class: 'facts' },
      fact('Verdict', verdictBadge(d.verdict ?? t.verdict)),
      fact('Time', time(d.time ?? t.observed_at)),
      fact('Tool', mono(d.tool_name ?? t.tool_name)),
      fact('Identity', d.identity),
      fact('Targets', d.targets ? targetsList(d.targets) : undefined),
      fact('Matched rule', mono(d.matched_rule)),
      fact('Reason codes', reasons(d.reason_codes ?? t.reasons, meanings)),
      fact('Violations', d.violations?.length ? h('span', {}, d.violations.join(', ')) : undefined),
      fact('Signature', signature(d.signature_status)),
      fact('Key id', mono(t.signature?.key_id ?? d.signature_status?.key_id)),
      fact('Trace id', mono(t.trace_id)),
      fact('Intent digest', mono(t.intent_digest)),
      fact('Policy digest', mono(t.policy_digest)),
      fact('Correlation id', mono(t.correlation_id)),
      fact('Approval token', mono(t.approval_token_ref)),
      fact('Pack', packs.length ? h('span', {}, packs.map((p) => h('a', { href: `/v1/packs/${encodeURIComponent(p.id)}/download`, text: p.id, download: '' }))) : h('span', { class: 'muted', text: 'in no stored pack yet' })),
    ),
    h('details', {}, h('summary', { text: 'Signed trace record' }), h('pre', { class: 'jwk', text: JSON.stringify(t, null, 2) })),
  );
}

async function main() {
  markNav();
  const id = new URLSearchParams(location.search).get('id') ?? '';
  $('#d-id').textContent = id;
  if (!id) return status('No decision id in the address (…/decision?id=…).', 'error');
  try {
    replace($('#decision'), render(await api.decision(id)));
  } catch (err) {
    status(errorText(err), 'error');
  }
}

main();
