// What every page shares: the current nav entry, and the live feed with its indicator.
import { api } from './api.js';

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
