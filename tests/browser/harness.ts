import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`); WARD_CHROMIUM points elsewhere. */
export const CHROMIUM = process.env['WARD_CHROMIUM'] ?? '/usr/bin/chromium';

/** Flags for a quiet, reproducible headless run: no network of its own, no first-run UI, no sync. */
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export interface Browser {
  context: BrowserContext;
  /** Every URL the browser requested, to prove nothing left the daemon's origin. */
  requests: string[];
  close(): Promise<void>;
}

/** A fresh Chromium with its own throw-away profile (--user-data-dir, set by Playwright from `profile`). */
export async function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set WARD_CHROMIUM)`);
  const profile = mkdtempSync(join(tmpdir(), 'ward-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1200, height: 800 },
    colorScheme: 'light',
    locale: 'en-GB',
    timezoneId: 'UTC',
  });
  const requests: string[] = [];
  context.on('request', (r) => requests.push(r.url()));
  // Collect CSP violations and script errors in the page itself (init scripts are exempt from CSP).
  // Written as text: these run in the page, and the project compiles without the DOM library.
  await context.addInitScript(`
    window.__ward = { csp: [], errors: [] };
    document.addEventListener('securitypolicyviolation', (e) => window.__ward.csp.push(e.violatedDirective + ' ' + e.blockedURI));
    window.addEventListener('error', (e) => window.__ward.errors.push(String(e.message)));
  `);
  return {
    context,
    requests,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export async function pageProblems(page: Page): Promise<{ csp: string[]; errors: string[] }> {
  return page.evaluate<{ csp: string[]; errors: string[] }>('window.__ward');
}
