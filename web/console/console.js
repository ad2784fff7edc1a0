// The decision console: recent decisions, filtered, with new ones arriving live.
import { api } from './api.js';
import { $, codes, errorText, h, replace, status, time, verdictBadge } from './dom.js';
import { liveFeed, markNav } from './shell.js';

const FIELDS = ['verdict', 'tool', 'reason', 'identity', 'since', 'until'];
let filter = {};
let feed;
let cursor;
const seen = new Set();

/** Form values → the API's query (times as RFC 3339 UTC; datetime-local is the reader's local time). */
function readFilter(form) {
  const out = {};
  for (const name of FIELDS) {
    const v = form.elements[name].value.trim();
    if (!v) continue;
    out[name] = name === 'since' || name === 'until' ? new Date(v).toISOString() : v;
  }
  return out;
}

function writeFilter(form, f) {
  for (const name of FIELDS) {
    const v = f[name] ?? '';
    if ((name === 'since' || name === 'until') && v) {
      const d = new Date(v);
      form.elements[name].value = Number.isNaN(d.getTime()) ? '' : new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString().slice(0, 19);
    } else form.elements[name].value = v;
  }
}

function query(f, extra = {}) {
  return new URLSearchParams({ ...f, ...extra }).toString();
}

/** The same test the server applies, for decisions arriving on the live feed. */
function matches(d) {
  if (filter.verdict && d.verdict !== filter.verdict) return false;
  if (filter.tool && d.tool_name !== filter.tool) return false;
  if (filter.reason && !(d.reason_codes ?? []).includes(filter.reason)) return false;
  if (filter.identity && d.identity !== filter.identity) return false;
  if (filter.since && Date.parse(d.time) < Date.parse(filter.since)) return false;
  if (filter.until && Date.parse(d.time) >= Date.parse(filter.until)) return false;
  return true;
}

function row(d, fresh) {
  const link = h('a', { href: `/ui/decision?id=${encodeURIComponent(d.id)}` }, time(d.time));
  return h(
    'tr',
    { class: fresh ? 'fresh' : undefined, dataset: { id: d.id, verdict: d.verdict } },
    h('td', {}, link),
    h('td', {}, verdictBadge(d.verdict)),
    h('td', {}, h('code', { text: d.tool_name ?? '' })),
    h('td', { text: d.identity ?? '' }),
    h('td', {}, h('code', { text: d.matched_rule ?? '' })),
    h('td', {}, codes(d.reason_codes)),
  );
}

function add(list, { fresh = false, top = false } = {}) {
  const body = $('#rows');
  for (const d of list) {
    if (seen.has(d.id)) continue;
    seen.add(d.id);
    const r = row(d, fresh);
    if (top) body.prepend(r);
    else body.append(r);
  }
  $('#rows-empty').hidden = seen.size > 0;
}

async function load() {
  seen.clear();
  replace($('#rows'));
  try {
    const page = await api.decisions(query(filter, { limit: '50' }));
    add(page.decisions ?? []);
    cursor = page.next_cursor;
    $('#more').hidden = !cursor;
  } catch (err) {
    status(errorText(err), 'error');
  }
}

async function more() {
  try {
    const page = await api.decisions(query(filter, { limit: '50', cursor }));
    add(page.decisions ?? []);
    cursor = page.next_cursor;
    $('#more').hidden = !cursor;
  } catch (err) {
    status(errorText(err), 'error');
  }
}

function subscribe() {
  feed?.close();
  // A decision later than `until` can never match: no live feed for a closed window.
  if (filter.until) return;
  feed = liveFeed('', { events: { decision: (d) => matches(d) && add([d], { fresh: true, top: true }) } });
}

async function apply() {
  const q = query(filter);
  history.replaceState(null, '', q ? `?${q}` : location.pathname);
  status('');
  await load();
  subscribe();
}

function main() {
  markNav();
  const form = $('#filters');
  const params = new URLSearchParams(location.search);
  for (const name of FIELDS) if (params.get(name)) filter[name] = params.get(name);
  writeFilter(form, filter);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    filter = readFilter(form);
    apply();
  });
  form.addEventListener('reset', () => {
    filter = {};
    setTimeout(apply);
  });
  $('#more').addEventListener('click', more);
  apply();
}

main();
