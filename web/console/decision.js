// One decision: its trace fields, whether its signature verifies and with which key, the rule
// that matched, what each reason code means, and the pack that holds it.
import { api } from './api.js';
import { $, errorText, h, replace, status, time, verdictBadge } from './dom.js';
import { liveFeed, markNav, startSession } from './shell.js';

function fact(label, value) {
  return [h('dt', { text: label }), h('dd', {}, value ?? h('span', { class: 'muted', text: '—' }))];
}

function mono(v) {
  return v ? h('code', { text: v }) : undefined;
}

function signature(sig) {
  if (!sig) return h('span', { class: 'muted', text: 'unknown' });
  const ok = sig.status === 'verified';
  return h('span', {}, h('span', { class: ok ? 'sig-ok' : 'sig-bad', text: sig.status || 'unknown' }), sig.error ? h('span', { class: 'muted', text: ` (${sig.error})` }) : null);
}

function reasons(list) {
  if (!list || list.length === 0) return h('span', { class: 'muted', text: 'none' });
  return h('ul', { class: 'reasons' }, list.map((r) => h('li', {}, h('code', { class: 'reason', text: r.code }), ` ${r.meaning}`)));
}

/** Who approved (in this daemon's inbox), and the reason each typed: signed into their token. */
function approvals(list) {
  if (!list || list.length === 0) return undefined;
  return h(
    'ul',
    { class: 'approvals' },
    list.map((a) =>
      h(
        'li',
        {},
        h('strong', { text: a.approver_identity }),
        ' ',
        a.reason ? h('q', { class: 'approval-reason', text: a.reason }) : h('span', { class: 'muted', text: 'no reason given' }),
        ' ',
        h('span', { class: 'muted small', text: `token ${a.token_id}` }),
        ' ',
        time(a.approved_at),
      ),
    ),
  );
}

function render(d) {
  const t = d.trace ?? {};
  const packs = d.packs ?? [];
  return h(
    'div',
    {},
    h(
      'dl',
      { class: 'facts' },
      fact('Verdict', verdictBadge(d.verdict)),
      fact('Time', time(t.observed_at ?? d.entry?.time)),
      fact('Tool', mono(t.tool_name)),
      fact('Identity', d.identity),
      fact('Matched rule', mono(d.matched_rule)),
      fact('Reason codes', reasons(d.reason_codes)),
      fact('Violations', t.violations?.length ? h('span', { text: t.violations.join(', ') }) : undefined),
      fact('Signature', signature(d.signature)),
      fact('Key id', mono(d.signature?.key_id || t.signature?.key_id)),
      fact('Trace id', mono(d.trace_id)),
      fact('Intent digest', mono(t.intent_digest)),
      fact('Policy digest', mono(t.policy_digest)),
      fact('Correlation id', mono(t.correlation_id)),
      fact('Approval token', mono(t.approval_token_ref)),
      fact('Approved by', approvals(d.approvals)),
      fact('Packs', packs.length ? h('ul', { class: 'packs' }, packs.map((p) => h('li', {}, h('a', { href: p.href, text: `${p.kind} ${p.id}` }), ' ', h('a', { href: `${p.href}/download`, download: '', text: 'download' })))) : h('span', { class: 'muted', text: 'in no stored pack yet' })),
    ),
    h('details', {}, h('summary', { text: 'Signed trace record' }), h('pre', { class: 'jwk', text: JSON.stringify(t, null, 2) })),
  );
}

async function main() {
  markNav();
  await startSession();
  liveFeed({}, {}); // only for the status badge: the decision itself does not change
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
