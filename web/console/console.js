// The decision console: decisions as they happen (the daemon's event stream, which first replays
// the recent ones it holds), filtered, plus older ones from the evidence store on request.
import { api } from './api.js';
import { $, codes, errorText, h, replace, status, time, verdictBadge } from './dom.js';
import { liveFeed, markNav, startSession } from './shell.js';

const FIELDS = ['verdict', 'tool', 'reason', 'identity', 'since', 'until'];
let filter = {};
let feed;
let cursor;
let appliedAt = Date.now();
const seen = new Set();
/** trace id → times (ms) of the rows shown for it: a store entry matching one within a second is that row. */
const shownTimes = new Map();
/** The oldest decision the stream replayed: the store is asked for what came before. */
let oldest;

/** Form values → filter (times as RFC 3339 UTC; datetime-local is the reader's local time). */
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

/** The stream filters verdict, tool, reason and identity on the server; time is checked here. */
function inWindow(iso) {
  const t = Date.parse(iso);
  if (filter.since && t < Date.parse(filter.since)) return false;
  if (filter.until && t >= Date.parse(filter.until)) return false;
  return true;
}

function row(d, fresh) {
  const ref = d.trace_id || d.id;
  return h(
    'tr',
    { class: fresh ? 'fresh' : undefined, dataset: { traceId: ref, verdict: d.verdict, tool: d.tool_name } },
    h('td', {}, h('a', { href: `/ui/decision?id=${encodeURIComponent(ref)}` }, time(d.time))),
    h('td', {}, verdictBadge(d.verdict)),
    h('td', {}, h('code', { text: d.tool_name ?? '' })),
    h('td', { text: d.identity ?? '' }),
    h('td', {}, h('code', { text: d.matched_rule ?? '' })),
    h('td', {}, codes(d.reason_codes)),
  );
}

/** Newest first: live decisions go on top, store pages at the bottom. */
function add(d, { top, fresh = false }) {
  // Identical calls share a trace id (it is derived from the policy, the intent and the verdict):
  // each decision is a row, keyed by the feed's sequence number or the store's event id.
  const key = d.seq !== undefined ? `seq:${d.seq}` : `event:${d.id}`;
  if (seen.has(key) || !inWindow(d.time)) return;
  const t = Date.parse(d.time);
  if (d.seq === undefined && (shownTimes.get(d.trace_id) ?? []).some((x) => Math.abs(x - t) < 1000)) return;
  seen.add(key);
  shownTimes.set(d.trace_id, [...(shownTimes.get(d.trace_id) ?? []), t]);
  if (d.seq !== undefined && (oldest === undefined || d.time < oldest)) oldest = d.time;
  const body = $('#rows');
  const r = row(d, fresh);
  if (top) body.prepend(r);
  else body.append(r);
  $('#rows-empty').hidden = true;
}

/** A store entry in the shape of a feed event (the store indexes no identity or rule). */
function fromStore(e) {
  return { id: e.id, trace_id: (e.refs ?? [])[0], time: e.time, verdict: e.verdict, tool_name: (e.tool_names ?? [])[0], reason_codes: e.reason_codes };
}

async function older() {
  // Before the stream's oldest decision (plus a second: a stored trace is timed when it was
  // signed, a little before the stream saw it; rows already shown are skipped in add()).
  const bound = oldest ? new Date(Date.parse(oldest) + 1000).toISOString() : undefined;
  const until = filter.until && bound ? (filter.until < bound ? filter.until : bound) : filter.until ?? bound;
  const params = { verdict: filter.verdict, tool: filter.tool, reason: filter.reason, since: filter.since, until, limit: '50', cursor };
  try {
    const page = await api.traces(params);
    for (const e of page.entries ?? []) add(fromStore(e), { top: false });
    cursor = page.next_cursor;
    $('#more').hidden = !cursor;
    $('#rows-empty').hidden = seen.size > 0;
  } catch (err) {
    status(errorText(err), 'error');
  }
}

function subscribe() {
  feed?.close();
  const params = { verdict: filter.verdict, tool: filter.tool, reason: filter.reason, identity: filter.identity, since_seq: '0' };
  // The stream first replays the recent decisions the daemon holds; those made since the filter
  // was applied are highlighted as new.
  feed = liveFeed(params, { events: { decision: (d) => add(d, { top: true, fresh: Date.parse(d.time) >= appliedAt }) } });
}

async function apply() {
  const q = new URLSearchParams(filter).toString();
  history.replaceState(null, '', q ? `?${q}` : location.pathname);
  status('');
  seen.clear();
  shownTimes.clear();
  oldest = undefined;
  cursor = undefined;
  appliedAt = Date.now();
  replace($('#rows'));
  $('#rows-empty').hidden = false;
  // The store cannot filter by identity: older decisions are offered only without that filter.
  $('#more').hidden = Boolean(filter.identity);
  subscribe();
}

async function main() {
  markNav();
  await startSession();
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
  $('#more').addEventListener('click', older);
  apply();
}

main().catch((err) => status(errorText(err), 'error'));
