// What every page shares: the current nav entry, and the live feed with its indicator.
import { api, ensureSession, signIn } from './api.js';
import { errorText, h, status } from './dom.js';

export function markNav() {
  const page = document.body.dataset.page;
  for (const a of document.querySelectorAll('[data-nav]')) if (a.dataset.nav === page) a.setAttribute('aria-current', 'page');
}

/**
 * Subscribe to the daemon's server-sent events. EventSource reconnects by itself (and sends
 * Last-Event-ID); `onOpen` runs on every (re)connection so the page can reload what it may have
 * missed meanwhile. Returns the EventSource so a page can close it when its filters change.
 */
export function liveFeed(query, handlers) {
  const indicator = document.getElementById('live');
  const source = new EventSource(api.eventsUrl(query));
  source.addEventListener('open', () => {
    indicator?.classList.add('on');
    if (indicator) indicator.textContent = 'live';
    handlers.onOpen?.();
  });
  source.addEventListener('error', () => {
    indicator?.classList.remove('on');
    if (indicator) indicator.textContent = source.readyState === EventSource.CLOSED ? 'offline' : 'reconnecting…';
  });
  for (const [type, fn] of Object.entries(handlers.events ?? {})) {
    source.addEventListener(type, (e) => {
      let data;
      try {
        data = JSON.parse(e.data);
      } catch {
        return;
      }
      fn(data, e);
    });
  }
  return source;
}

export function setPendingCount(n) {
  const node = document.getElementById('pending-count');
  if (!node) return;
  node.hidden = !(n > 0);
  node.textContent = String(n);
}

/**
 * Start the page's session. On a daemon that needs a bearer token, ask for it once: it goes to
 * POST /ui/session in a header and is then forgotten (the session cookie carries on). Resolves
 * when the session exists; the sign-in form stays up otherwise.
 */
export async function startSession() {
  if (await ensureSession()) return;
  const input = h('input', { type: 'password', name: 'token', autocomplete: 'current-password', required: true });
  const form = h('form', { class: 'panel signin' }, h('h2', { text: 'Sign in' }), h('p', { class: 'muted', text: 'This daemon needs its API token (ward serve --auth-token-env). It is sent once to start a session and not kept by this page.' }), h('label', {}, 'Token', input), h('button', { type: 'submit', text: 'Sign in' }));
  document.querySelector('main').prepend(form);
  input.focus();
  await new Promise((resolve) => {
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      try {
        await signIn(input.value);
        input.value = '';
        form.remove();
        status('');
        resolve();
      } catch (err) {
        status(errorText(err), 'error');
      }
    });
  });
}
