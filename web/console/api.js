// The console's only way to the daemon: same-origin fetches to the documented API (docs/console.md).
// Every route the pages use is named here, so the pages never build URLs themselves.
//
// Session and CSRF: the session is an HttpOnly cookie set by the daemon (so no bearer token ever
// appears in a URL, in page script or in a log); every state change also sends the CSRF token from
// the session endpoint in a header, which a cross-site form cannot set.

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error || `HTTP ${status}`);
    this.status = status;
    this.code = body?.error_code;
    this.hint = body?.hint;
    this.body = body;
  }
}

const ROUTES = {
  session: '/v1/console/session',
  inbox: '/v1/console/inbox',
  pending: (id) => `/v1/console/inbox/${encodeURIComponent(id)}`,
  template: (id) => `/v1/console/inbox/${encodeURIComponent(id)}/template`,
  approve: (id) => `/v1/console/inbox/${encodeURIComponent(id)}/approve`,
  deny: (id) => `/v1/console/inbox/${encodeURIComponent(id)}/deny`,
  decisions: '/v1/console/decisions',
  decision: (id) => `/v1/console/decisions/${encodeURIComponent(id)}`,
  events: '/v1/console/events',
  policy: '/v1/console/policy',
  preview: '/v1/console/policy/preview',
};

let csrf;

async function request(method, path, body) {
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-ward-csrf'] = await csrfToken();
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

/** The session's CSRF token (fetched once per page; the session endpoint also starts the session). */
export async function csrfToken() {
  if (!csrf) {
    const s = await request('GET', ROUTES.session);
    csrf = s.csrf_token;
  }
  return csrf;
}

export const api = {
  session: () => request('GET', ROUTES.session),
  inbox: () => request('GET', ROUTES.inbox),
  template: (id, fields) => request('POST', ROUTES.template(id), fields),
  approve: (id, body) => request('POST', ROUTES.approve(id), body),
  deny: (id, body) => request('POST', ROUTES.deny(id), body),
  decisions: (query) => request('GET', `${ROUTES.decisions}${query ? `?${query}` : ''}`),
  decision: (id) => request('GET', ROUTES.decision(id)),
  policy: () => request('GET', ROUTES.policy),
  preview: (policyText) => request('POST', ROUTES.preview, { policy: policyText }),
  eventsUrl: (query) => `${ROUTES.events}${query ? `?${query}` : ''}`,
};
