// The approvals inbox: what waits for a person, and approving or denying it with a signature made
// in this browser.
import { api } from './api.js';
import { jcs, sha256Hex } from './jcs.js';
import { $, codes, errorText, h, replace, status, targetsList, time } from './dom.js';
import { forgetKey, generateKey, importKeyFile, loadKey, setApprover, signDigest } from './keys.js';
import { liveFeed, markNav, setPendingCount, startSession } from './shell.js';

let key; // the approver key record (keys.js), or undefined
const shown = new Map(); // pending id -> card element

function showKey() {
  $('#key-none').hidden = Boolean(key);
  $('#key-some').hidden = !key;
  if (!key) return;
  $('#key-approver').textContent = key.approver || '(none)';
  $('#key-id').textContent = key.keyId;
  $('#key-source').textContent = key.source;
  const jwk = { ...key.publicJwk, ...(key.approver ? { ward_approver: key.approver } : {}) };
  $('#key-jwk').textContent = JSON.stringify(jwk, null, 2);
}

function approverName() {
  const name = $('#approver-name').value.trim();
  if (!name) {
    status('Enter your approver identity first (it is recorded in the token).', 'error');
    $('#approver-name').focus();
    return undefined;
  }
  return name;
}

function wireKeyPanel() {
  $('#key-create').addEventListener('click', async () => {
    const name = approverName();
    if (!name) return;
    try {
      key = await generateKey(name);
      status(`Created key ${key.keyId.slice(0, 16)}…: register its public key, then approve.`, 'ok');
      showKey();
    } catch (err) {
      status(errorText(err), 'error');
    }
  });
  $('#key-file').addEventListener('change', async (e) => {
    const file = e.target.files?.[0];
    e.target.value = '';
    if (!file) return;
    const name = approverName();
    if (!name) return;
    try {
      key = await importKeyFile(await file.arrayBuffer(), file.name, name);
      status(`Imported key ${key.keyId.slice(0, 16)}…`, 'ok');
      showKey();
    } catch (err) {
      status(errorText(err), 'error');
    }
  });
  $('#key-forget').addEventListener('click', async () => {
    if (!confirm('Forget this key? A key created in this browser cannot be recovered.')) return;
    await forgetKey().catch(() => {});
    key = undefined;
    showKey();
  });
  $('#key-rename').addEventListener('click', async () => {
    const name = prompt('Approver identity', key.approver || '');
    if (name === null || !name.trim()) return;
    key = await setApprover(key, name.trim());
    showKey();
  });
  $('#key-copy').addEventListener('click', () => navigator.clipboard?.writeText($('#key-jwk').textContent).then(() => status('Public key copied.', 'ok')));
}

/** Argument values only where the daemon shows them (`--approval-args show`); otherwise their digest. */
function argsView(item) {
  const args = item.args;
  if (!args) return null;
  if (args.redacted) return h('div', { class: 'args' }, h('span', { class: 'redacted', text: 'arguments redacted' }), ' ', h('code', { class: 'muted', title: 'args digest', text: (args.args_digest || '').slice(0, 16) }));
  const rows = Object.entries(args.values ?? {}).map(([k, v]) => h('div', {}, h('span', { class: 'muted', text: `${k}: ` }), h('span', { text: typeof v === 'string' ? v : JSON.stringify(v) })));
  return h('div', { class: 'args' }, rows);
}

function card(item) {
  const form = $('#decide-template').content.firstElementChild.cloneNode(true);
  const node = h(
    'li',
    { class: 'card', id: `pending-${item.id}`, dataset: { id: item.id, traceId: item.trace_id || '', requestedAt: item.requested_at || '' } },
    h('header', {}, h('span', { class: 'tool', text: item.tool_name }), h('span', { class: 'muted' }, 'asked by ', h('strong', { text: item.identity || 'unknown' }), ' ', time(item.requested_at))),
    targetsList(item.targets),
    h('div', {}, h('span', { class: 'muted', text: 'rule ' }), h('code', { text: item.matched_rule || '—' }), ' ', codes(item.reason_codes, item.reason_meanings)),
    argsView(item),
    // What an approval will let the agent retry (docs/approvals.md "Call or session").
    h('p', { class: 'muted small binding', text: item.call?.call_digest ? 'An approval lets exactly this call run once, from this session or a new one.' : `An approval lets exactly this call run once, from session ${item.session_id || '(none)'} only (the policy binds approvals to the session).` }),
    item.required_approvals > 1 ? h('p', { class: 'muted', text: `needs ${item.required_approvals} approvals from distinct approvers (${item.approvals?.length ?? 0} so far)` }) : null,
    item.source === 'reported' ? h('p', { class: 'muted small', text: `reported by ${item.reporter || 'a proxy'}` }) : null,
    item.trace_id ? h('a', { class: 'small', href: `/ui/decision?id=${encodeURIComponent(item.trace_id)}`, text: 'decision details' }) : null,
    form,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    decide(item, node, form, e.submitter?.value === 'deny' ? 'deny' : 'approve');
  });
  return node;
}

const TTL_SECONDS = { '15m': 900, '1h': 3600, '8h': 28800, '24h': 86400 };

/**
 * Check the template before signing it: the digest must be sha256(JCS(payload)) and the payload
 * must be about this entry and this approver. The page never signs bytes it cannot explain.
 */
async function checkTemplate(item, tpl, kind, ttlSeconds, reason) {
  const p = tpl.payload ?? {};
  if ((await sha256Hex(jcs(p))) !== tpl.signed_digest) throw new Error('the daemon\'s template does not match its digest: not signed');
  if (p.intent_digest !== item.intent_digest || p.policy_digest !== item.policy_digest) throw new Error('the template is for another call: not signed');
  if (p.approver_identity !== key.approver) throw new Error('the template names another approver: not signed');
  const life = Date.parse(p.expires_at) - Date.parse(p.created_at);
  if (!(life > 0 && life <= ttlSeconds * 1000)) throw new Error('the template outlives the validity you chose: not signed');
  if (kind === 'approval') {
    if ((p.delegation_binding_digest ?? '') !== (item.delegation_binding_digest ?? '')) throw new Error('the template binds another delegation: not signed');
    if (JSON.stringify(p.scope) !== JSON.stringify(item.required_scope)) throw new Error('the template\'s scope is not what the call needs: not signed');
    // Zero bounds are omitted from the token (as Go omits them): absent means unbounded.
    if ((p.max_targets ?? 0) !== (item.max_targets ?? 0) || (p.max_ops ?? 0) !== (item.max_ops ?? 0)) throw new Error('the template\'s bounds are not the call\'s: not signed');
    // The token names the call this card shows: its tool, its targets as listed, its argument digest.
    const shownTargets = (item.targets ?? []).map((t) => `${t.kind}:${t.canonical ?? t.value}${t.operation ? ` (${t.operation})` : ''}`);
    if (p.tool_name !== item.tool_name || p.args_digest !== item.args?.args_digest) throw new Error('the template names another tool or other arguments than shown: not signed');
    if (JSON.stringify(p.targets ?? []) !== JSON.stringify(shownTargets)) throw new Error('the template names other targets than shown: not signed');
    if ((p.call_digest ?? '') !== (item.call?.call_digest ?? '')) throw new Error('the template binds the call otherwise than the entry says: not signed');
    if ((p.reason ?? '') !== reason) throw new Error('the template carries another reason than yours: not signed');
  }
}

async function decide(item, node, form, action) {
  if (!key) {
    status('Create or import your approver key first.', 'error');
    $('#approver').scrollIntoView();
    return;
  }
  const reason = form.elements.reason.value.trim();
  if (action === 'deny' && !reason) {
    status('A denial needs a reason.', 'error');
    form.elements.reason.focus();
    return;
  }
  const kind = action === 'approve' ? 'approval' : 'denial';
  for (const b of form.querySelectorAll('button')) b.disabled = true;
  try {
    // The daemon builds the exact record (digests, scope, times, ids); this page checks it and
    // signs its digest. The private key never leaves this browser.
    const ttl = TTL_SECONDS[form.elements.ttl.value] ?? 3600;
    // The reason is the approver's own words: signed into the token (or the denial) and shown with the decision.
    const fields = { kind, approver: key.approver, ttl_seconds: ttl, reason: reason || undefined };
    const tpl = await api.template(item.id, fields);
    await checkTemplate(item, tpl, kind, ttl, reason);
    const { key_id, sig } = await signDigest(key, tpl.signed_digest);
    const res = await (kind === 'approval' ? api.approve : api.deny)(item.id, { payload: tpl.payload, key_id, sig });
    const done = res.status !== 'pending';
    if (done) node.classList.add('done');
    const text = kind === 'denial' ? `Denied by ${key.approver}` : done ? `Approved by ${key.approver}: token ${res.approval?.token_id ?? ''}` : `Approval ${res.approvals} of ${res.required_approvals} recorded`;
    replace(form, h('p', { class: kind === 'approval' ? 'ok' : 'error', text }));
    status(kind === 'approval' ? `Approved ${item.tool_name}: the agent's retry is allowed once.` : `Denied ${item.tool_name}.`, 'ok');
  } catch (err) {
    for (const b of form.querySelectorAll('button')) b.disabled = false;
    status(errorText(err), 'error');
  }
}

async function refresh() {
  let list;
  try {
    list = (await api.approvals('pending')).entries ?? [];
  } catch (err) {
    status(errorText(err), 'error');
    return;
  }
  const ids = new Set(list.map((p) => p.id));
  for (const [id, node] of shown) {
    if (!ids.has(id) && !node.classList.contains('done')) {
      node.remove();
      shown.delete(id);
    }
  }
  const root = $('#pending');
  for (const item of list) {
    if (shown.has(item.id)) continue;
    shown.set(item.id, card(item));
  }
  // Newest first. Only cards out of place are inserted, so a card someone is filling in is not
  // moved (moving it would take the focus away).
  const order = [...shown.values()].sort((a, b) => (a.dataset.requestedAt < b.dataset.requestedAt ? 1 : a.dataset.requestedAt > b.dataset.requestedAt ? -1 : 0));
  order.forEach((node, i) => {
    if (root.children[i] !== node) root.insertBefore(node, root.children[i] ?? null);
  });
  $('#pending-empty').hidden = shown.size > 0;
  setPendingCount(list.length);
}

async function main() {
  markNav();
  wireKeyPanel();
  key = await loadKey();
  showKey();
  await startSession();
  await refresh();
  liveFeed({}, { onOpen: refresh, events: { approval: refresh, decision: (d) => d.verdict === 'require_approval' && refresh() } });
}

main().catch((err) => status(errorText(err), 'error'));
