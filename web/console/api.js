// The console's only way to the daemon: same-origin fetches to the documented API (docs/console.md).
// Every route the pages use is named here, so the pages never build URLs themselves.
//
// Session and CSRF: the page signs in once (POST /ui/session) and gets an HttpOnly, SameSite=Strict
// cookie plus a CSRF token it keeps in memory; every state change sends that token in X-Ward-CSRF.
// The bearer token, when the daemon needs one, is typed by the user, sent once in a header, and
// never stored, put in a URL or logged.

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error || `HTTP ${status}`);
    this.status = status;
    this.code = body?.error_code;
    this.hint = body?.hint;
    this.body = body;
  }
}

const seg = encodeURIComponent;

const ROUTES = {
  session: '/ui/session',
  approvals: '/v1/approvals',
  approval: (id) => `/v1/approvals/${seg(id)}`,
  template: (id) => `/v1/approvals/${seg(id)}/token-template`,
  approve: (id) => `/v1/approvals/${seg(id)}/approve`,
  deny: (id) => `/v1/approvals/${seg(id)}/deny`,
  traces: '/v1/traces',
  decision: (id) => `/v1/decisions/${seg(id)}`,
  events: '/v1/decisions/stream',
  policy: '/v1/console/policy',
  preview: '/v1/console/policy/preview',
};

let csrf;

async function request(method, path, body, extraHeaders = {}) {
  const headers = { accept: 'application/json', ...extraHeaders };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrf) headers['x-ward-csrf'] = csrf;
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin', cache: 'no-store', redirect: 'error' });
  let value;
  try {
    value = await res.json();
  } catch {
    value = undefined;
  }
  if (!res.ok || value?.ok === false) throw new ApiError(res.status, value);
  return value;
}

const q = (params) => {
  const s = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== '')).toString();
  return s ? `?${s}` : '';
};

/**
 * Make sure this page has a session: reuse the cookie's (GET tells us its CSRF token again), or
 * sign in. Without a bearer token this works on a loopback listener that needs none; otherwise the
 * daemon answers 401 and `signIn(token)` is called with what the user typed.
 */
export async function ensureSession() {
  if (csrf) return true;
  let s;
  try {
    s = await request('GET', ROUTES.session);
  } catch (err) {
    if (err.status !== 401) throw err;
    return false; // a daemon with a token, and no valid cookie: sign in with the token
  }
  if (s.authenticated) {
    csrf = s.csrf_token;
    return true;
  }
  try {
    await signIn();
    return true;
  } catch (err) {
    if (err.status === 401) return false;
    throw err;
  }
}

export async function signIn(bearer) {
  const s = await request('POST', ROUTES.session, undefined, bearer ? { authorization: `Bearer ${bearer}` } : {});
  csrf = s.csrf_token;
  return s;
}

export const api = {
  approvals: (status = 'pending') => request('GET', `${ROUTES.approvals}${q({ status })}`),
  approval: (id) => request('GET', ROUTES.approval(id)),
  /** kind: approval | denial; fields: approver, reason_code (approval) or reason (denial), ttl_seconds. */
  template: (id, fields) => request('GET', `${ROUTES.template(id)}${q(fields)}`),
  approve: (id, submission) => request('POST', ROUTES.approve(id), submission),
  deny: (id, submission) => request('POST', ROUTES.deny(id), submission),
  /** Stored decisions (GET /v1/traces: verdict, tool, reason, since, until, limit, cursor). */
  traces: (params) => request('GET', `${ROUTES.traces}${q(params)}`),
  decision: (id) => request('GET', ROUTES.decision(id)),
  policy: () => request('GET', ROUTES.policy),
  preview: (policyYaml) => request('POST', ROUTES.preview, { policy_yaml: policyYaml }),
  eventsUrl: (params = {}) => `${ROUTES.events}${q(params)}`,
};
