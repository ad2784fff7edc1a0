import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, workdir, type DaemonChild } from '../daemon/helpers.js';
import { launch, pageProblems, type Browser } from './harness.js';

/* A daemon that needs a bearer token: the page asks for it once, and it never shows up in a URL or a log. */

const TOKEN = 'console-test-token-0123456789abcdef';
let daemon: DaemonChild;
let browser: Browser;

beforeAll(async () => {
  const w = workdir();
  daemon = await startDaemon(['--policy', w.policy, '--state-dir', w.state, '--auth-token-env', 'WARD_TEST_TOKEN'], { cwd: w.dir, env: { WARD_TEST_TOKEN: TOKEN } });
  browser = await launch();
});

afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
});

describe('signing in to a daemon with a token', () => {
  it('asks for the token once, then works from the session cookie', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${daemon.url}/ui`);
    await page.waitForSelector('form.signin');
    await page.fill('form.signin input[name=token]', 'wrong-token-wrong-token');
    await page.click('form.signin button');
    await expect.poll(async () => page.textContent('#status')).toMatch(/token|auth/i);
    await page.fill('form.signin input[name=token]', TOKEN);
    await page.click('form.signin button');
    await page.waitForSelector('form.signin', { state: 'detached' });
    await page.waitForSelector('#pending-empty:not([hidden])');
    // Another page of the same browser: the cookie's session, no second sign-in.
    await page.goto(`${daemon.url}/ui/console`);
    await page.waitForSelector('#live.on');
    expect(await page.locator('form.signin').count()).toBe(0);
    expect(await pageProblems(page)).toEqual({ csp: [], errors: [] });
    const cookies = await browser.context.cookies(daemon.url);
    expect(cookies.find((c) => c.name === 'ward_console')).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(browser.requests.some((u) => u.includes(TOKEN))).toBe(false);
    expect(daemon.stderr()).not.toContain(TOKEN);
    expect(await page.evaluate('JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie')).not.toContain(TOKEN);
    await page.close();
  });
});
