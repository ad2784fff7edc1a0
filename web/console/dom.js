// Small DOM helpers. Text always goes in as text (textContent, never innerHTML): everything the
// pages show (tool names, targets, reasons) comes from agents and must not become markup.

export function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = String(value);
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function $(selector, root = document) {
  return root.querySelector(selector);
}

export function replace(node, ...children) {
  node.replaceChildren(...children.flat().filter((c) => c !== undefined && c !== null && c !== false));
}

/** A time in the reader's time zone (today: the time only), with the exact value on hover. */
export function time(iso) {
  if (!iso) return h('span', { class: 'muted', text: '—' });
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return h('span', { text: iso });
  const today = d.toDateString() === new Date().toDateString();
  const text = today ? d.toLocaleTimeString() : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
  return h('time', { datetime: iso, title: iso, text });
}

export function verdictBadge(verdict) {
  return h('span', { class: `badge v-${String(verdict || 'unknown').replace(/[^a-z_]/g, '')}`, text: verdict || 'unknown' });
}

export function codes(list, meanings = {}) {
  const items = (list || []).map((c) => h('code', { class: 'reason', title: meanings[c] || undefined, text: c }));
  return items.length ? h('span', { class: 'codes' }, items) : h('span', { class: 'muted', text: '—' });
}

export function targetsList(targets) {
  if (!targets || targets.length === 0) return h('span', { class: 'muted', text: 'no targets' });
  return h(
    'ul',
    { class: 'targets' },
    // What the target will touch first (`canonical`, derived by Ward); the spelling in the call beside it when it differs.
    targets.map((t) =>
      h(
        'li',
        {},
        h('span', { class: 'kind', text: t.kind || '' }),
        ' ',
        h('code', { class: 'canonical', text: t.canonical ?? t.value ?? '' }),
        t.operation ? h('span', { class: 'op', text: ` ${t.operation}` }) : null,
        t.canonical && t.canonical !== t.value ? h('span', { class: 'muted small', text: ` written ${t.value}` }) : null,
      ),
    ),
  );
}

/** The page's status line (aria-live): errors and confirmations. */
export function status(message, kind = 'info') {
  const node = document.getElementById('status');
  if (!node) return;
  node.className = `status ${kind}`;
  node.textContent = message;
}

export function errorText(err) {
  if (!err) return 'unknown error';
  const hint = err.hint ? ` (${err.hint})` : '';
  return `${err.message || String(err)}${err.code ? ` [${err.code}]` : ''}${hint}`;
}
