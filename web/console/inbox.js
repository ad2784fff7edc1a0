// The approvals inbox: what waits for a person, and approving or denying it with a signature made
// in this browser.
import { api } from './api.js';
import { $, codes, errorText, h, replace, status, targetsList, time } from './dom.js';
import { forgetKey, generateKey, importKeyFile, loadKey, setApprover, signDigest } from './keys.js';
import { liveFeed, markNav, setPendingCount } from './shell.js';

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
  $('#key-registered').textContent = key.registered === undefined ? 'unknown' : key.registered ? 'yes: the daemon trusts this key' : 'no: add the public key to the approvers list (ward serve --approver-keys)';
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

async function checkRegistered() {
  if (!key) return;
  try {
    const s = await api.session();
    const ids = (s.approver_key_ids ?? []).map(String);
    key = { ...key, registered: s.approver_key_ids ? ids.includes(key.keyId) : undefined };
  } catch {
    key = { ...key, registered: undefined };
  }
  showKey();
}

function wireKeyPanel() {
  $('#key-create').addEventListener('click', async () => {
    const name = approverName();
    if (!name) return;
    try {
      key = await generateKey(name);
      status(`Created key ${key.keyId.slice(0, 16)}…: register its public key, then approve.`, 'ok');
      await checkRegistered();
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
      await checkRegistered();
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

function argsView(item) {
  const args = item.args;
  if (args === undefined || args === null) return null;
  const rows = Object.entries(args).map(([k, v]) =>
    h('div', {}, h('span', { class: 'muted', text: `${k}: ` }), v && typeof v === 'object' && v.redacted ? h('span', { class: 'redacted', text: 'redacted' }) : h('span', { text: typeof v === 'string' ? v : JSON.stringify(v) })),
  );
  return h('div', { class: 'args' }, rows);
}

function card(item) {
  const form = $('#decide-template').content.firstElementChild.cloneNode(true);
  const node = h(
    'li',
    { class: 'card', id: `pending-${item.id}`, dataset: { id: item.id } },
    h('header', {}, h('span', { class: 'tool', text: item.tool_name }), h('span', { class: 'muted' }, 'asked by ', h('strong', { text: item.identity || 'unknown' }), ' ', time(item.requested_at))),
    targetsList(item.targets),
    h('div', {}, h('span', { class: 'muted', text: 'rule ' }), h('code', { text: item.matched_rule || '—' }), ' ', codes(item.reason_codes, item.reason_meanings)),
    argsView(item),
    item.trace_ref ? h('a', { href: `/ui/decision?id=${encodeURIComponent(item.trace_ref)}`, text: 'decision details' }) : null,
    form,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    decide(item, node, form, e.submitter?.value === 'deny' ? 'deny' : 'approve');
  });
  return node;
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
  for (const b of form.querySelectorAll('button')) b.disabled = true;
  try {
    // The daemon builds the exact token (digests, scope, times); this page signs the digest of
    // those bytes. The daemon never sees the private key and cannot sign for the approver.
    const tpl = await api.template(item.id, { action, approver: key.approver, reason, ttl: form.elements.ttl.value });
    const signature = await signDigest(key, tpl.signed_digest);
    const res = await (action === 'approve' ? api.approve : api.deny)(item.id, { template_id: tpl.template_id, signature });
    node.classList.add('done');
    replace(form, h('p', { class: action === 'approve' ? 'ok' : 'error', text: action === 'approve' ? `Approved: token ${res.token_id ?? ''}` : 'Denied' }));
    status(action === 'approve' ? `Approved ${item.tool_name}; the agent's retry will be allowed once.` : `Denied ${item.tool_name}.`, 'ok');
  } catch (err) {
    for (const b of form.querySelectorAll('button')) b.disabled = false;
    status(errorText(err), 'error');
  }
}

async function refresh() {
  let list;
  try {
    list = (await api.inbox()).pending ?? [];
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
    const node = card(item);
    shown.set(item.id, node);
    root.prepend(node);
  }
  $('#pending-empty').hidden = shown.size > 0;
  setPendingCount(list.length);
}

async function main() {
  markNav();
  wireKeyPanel();
  key = await loadKey();
  showKey();
  if (key) checkRegistered();
  await refresh();
  liveFeed('', { onOpen: refresh, events: { pending: refresh, resolved: refresh } });
}

main().catch((err) => status(errorText(err), 'error'));
