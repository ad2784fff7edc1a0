import { spawnSync } from 'node:child_process';
import { createHash, generateKeyPairSync } from 'node:crypto';
import canonicalize from 'canonicalize';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, tempDir, WARD } from '../cli/run.js';
import { call, intent, startDaemon, type DaemonChild } from '../daemon/helpers.js';
import { launch, pageProblems, type Browser } from './harness.js';

/*
 * The console end to end: a daemon with an approvers list, Chromium on its /ui pages, agents
 * calling POST /v1/gate/eval. Screenshots for docs/console.md are written when
 * WARD_SCREENSHOTS=1 (`WARD_SCREENSHOTS=1 npm run test:browser`), else into a temporary directory.
 */

const SHOTS = process.env['WARD_SCREENSHOTS'] === '1' ? join(REPO, 'docs', 'console') : tempDir('ward-shots-');

let daemon: DaemonChild;
let browser: Browser;
let dir: string;
let policy: string;
let approvers: string;
const otherApprover = { ...generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }), ward_approver: 'carol' };

/** A write the medium-risk baseline sends for approval; `n` makes each call a distinct intent. */
function writeIntent(n: number, identity = 'agent.builder'): Record<string, unknown> {
  const i = intent('write-config') as { args: Record<string, unknown>; targets: { value: string }[]; context: Record<string, unknown> };
  const path = `/workspace/config-${n}.yaml`;
  return { ...i, args: { ...i.args, path }, targets: [{ ...i.targets[0]!, value: path }], context: { ...i.context, identity } };
}

async function evaluate(body: Record<string, unknown>): Promise<Record<string, any>> {
  const r = await call(daemon.url, '/v1/gate/eval', { body: { intent: body } });
  expect(r.status, r.text).toBe(200);
  return r.json as Record<string, any>;
}

/** Record in the page when each inbox card first appears (the browser's clock, same machine). */
async function watchCards(page: Page): Promise<void> {
  await page.evaluate(`(() => {
    window.__cards = {};
    const note = () => { for (const li of document.querySelectorAll('#pending li[data-id]')) window.__cards[li.dataset.id] ??= Date.now(); };
    new MutationObserver(note).observe(document.getElementById('pending'), { childList: true, subtree: true });
    note();
  })()`);
}

async function cardFor(page: Page, traceId: string): Promise<{ id: string; seenAt: number }> {
  const card = page.locator(`#pending li[data-trace-id="${traceId}"]`);
  await card.waitFor({ timeout: 10_000 });
  const id = (await card.getAttribute('data-id'))!;
  const seenAt = (await page.evaluate(`window.__cards[${JSON.stringify(id)}]`)) as number;
  return { id, seenAt };
}

beforeAll(async () => {
  dir = tempDir('ward-console-');
  policy = join(dir, 'policy.yaml');
  copyFileSync(join(REPO, 'policies', 'baseline-mediumrisk.yaml'), policy);
  approvers = join(dir, 'approvers.jwks');
  // The daemon refuses an approvers list without keys: start with someone else's, add alice's later.
  writeFileSync(approvers, JSON.stringify({ keys: [otherApprover] }) + '\n');
  mkdirSync(SHOTS, { recursive: true });
  daemon = await startDaemon(['--policy', policy, '--state-dir', join(dir, '.ward'), '--approver-keys', approvers, '--capture-intents'], { cwd: dir });
  browser = await launch();
});

afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
});

describe('the approvals inbox', () => {
  let page: Page;
  let jwk: Record<string, string>;
  const latencies: number[] = [];

  it('registers a key created in the browser', async () => {
    page = await browser.context.newPage();
    await page.goto(`${daemon.url}/ui`);
    await page.fill('#approver-name', 'alice');
    await page.click('#key-create');
    await page.waitForSelector('#key-some:not([hidden])');
    jwk = JSON.parse((await page.textContent('#key-jwk'))!) as Record<string, string>;
    writeFileSync(approvers, JSON.stringify({ keys: [otherApprover, jwk] }, null, 2) + '\n'); // the daemon re-reads the list when it changes
    await watchCards(page);
  });

  it('shows a require_approval decision within a second, and an approval in the browser lets the retry through once', async () => {
    for (let n = 0; n < 9; n++) {
      const sent = Date.now();
      const d = await evaluate(writeIntent(n));
      expect(d['verdict']).toBe('require_approval');
      const { seenAt } = await cardFor(page, d['trace_id']);
      latencies.push(seenAt - sent);
    }
    latencies.sort((a, b) => a - b);
    const median = latencies[Math.floor(latencies.length / 2)]!;
    console.log(`inbox latency (eval sent -> card shown), ms: median ${median}, all ${latencies.join(' ')}`);
    expect(median).toBeLessThan(5_000); // generous: the target (< 1 s) is measured, not asserted

    const body = writeIntent(0);
    const first = await evaluate(body);
    const { id } = await cardFor(page, first['trace_id']);
    const card = page.locator(`#pending li[data-id="${id}"]`);
    await card.locator('input[name=reason]').fill('change_4711');
    const approved = page.waitForResponse((r) => r.url().endsWith(`/v1/approvals/${id}/approve`));
    await card.locator('button.approve').click();
    const token = ((await (await approved).json()) as { token: Record<string, unknown> }).token;
    await card.locator('p.ok').waitFor();
    expect(await card.locator('p.ok').textContent()).toContain('Approved by alice');

    // What was signed names the call the card showed, and the approver's own words.
    expect(token['tool_name']).toBe(body['tool_name']);
    expect(token['targets']).toEqual([`path:${(body['targets'] as { value: string }[])[0]!.value} (write)`]);
    expect(token['reason']).toBe('change_4711');
    expect(await card.locator('code.canonical').first().textContent()).toBe((body['targets'] as { value: string }[])[0]!.value);
    expect(await card.locator('p.binding').textContent()).toContain('from this session or a new one');

    const retry = await evaluate(body);
    expect(retry['verdict'], JSON.stringify(retry)).toBe('allow');
    expect(retry['reason_codes']).toContain('approval_granted');
    // The decision page of the granted call shows who approved it and why.
    const details = await page.context().newPage();
    await details.goto(`${daemon.url}/ui/decision?id=${encodeURIComponent(String(retry['trace_id']))}`);
    await details.locator('q.approval-reason').waitFor();
    expect(await details.locator('q.approval-reason').textContent()).toBe('change_4711');
    expect(await details.locator('ul.approvals').textContent()).toContain('alice');
    await details.close();
    const again = await evaluate(body);
    expect(again['verdict']).toBe('require_approval'); // one use

    // The token verifies offline: the CLI, a fresh state directory, the approvers list as the only trust.
    const offline = tempDir('ward-offline-');
    writeFileSync(join(offline, 'token.json'), JSON.stringify(token));
    writeFileSync(join(offline, 'intent.json'), JSON.stringify(body));
    const cli = spawnSync(
      process.execPath,
      [WARD, 'gate', 'eval', '--policy', policy, '--intent', join(offline, 'intent.json'), '--approval-token', join(offline, 'token.json'), '--approval-jwks', approvers, '--state-dir', join(offline, '.ward'), '--json'],
      { cwd: offline, encoding: 'utf8', env: { ...process.env, WARD_STATE_DIR: '' } },
    );
    const out = JSON.parse(cli.stdout) as Record<string, unknown>;
    expect(out['verdict'], cli.stdout + cli.stderr).toBe('allow');
    expect(out['reason_codes']).toContain('approval_granted');
  });

  it('refuses to sign a template that is not what the call needs, even with a matching digest', async () => {
    const d = await evaluate(writeIntent(300));
    const { id } = await cardFor(page, d['trace_id']);
    // A daemon (or anything in between) that widens the scope and recomputes the digest.
    await page.route('**/token-template?*', async (route) => {
      const res = await route.fetch();
      const tpl = (await res.json()) as { payload: Record<string, unknown>; signed_digest: string; bytes_to_sign: string };
      tpl.payload['scope'] = ['*'];
      const digest = createHash('sha256').update(canonicalize(tpl.payload)!).digest();
      await route.fulfill({ response: res, json: { ...tpl, signed_digest: digest.toString('hex'), bytes_to_sign: digest.toString('base64') } });
    });
    const posts: string[] = [];
    const onRequest = (r: { method(): string; url(): string }) => void (r.method() === 'POST' && posts.push(r.url()));
    page.on('request', onRequest);
    const card = page.locator(`#pending li[data-id="${id}"]`);
    await card.locator('button.approve').click();
    await expect.poll(async () => page.textContent('#status')).toContain('scope is not what the call needs');
    expect(posts).toEqual([]);
    page.off('request', onRequest);
    await page.unroute('**/token-template?*');
    expect((await evaluate(writeIntent(300)))['verdict']).toBe('require_approval');
  });

  it('refuses to sign a template that names other targets than the card shows', async () => {
    const d = await evaluate(writeIntent(301));
    const { id } = await cardFor(page, d['trace_id']);
    // The digest still matches the payload: only what the card shows can catch the swap.
    await page.route('**/token-template?*', async (route) => {
      const res = await route.fetch();
      const tpl = (await res.json()) as { payload: Record<string, unknown>; signed_digest: string; bytes_to_sign: string };
      tpl.payload['targets'] = ['url:https://status.internal.example/health (read)'];
      const digest = createHash('sha256').update(canonicalize(tpl.payload)!).digest();
      await route.fulfill({ response: res, json: { ...tpl, signed_digest: digest.toString('hex'), bytes_to_sign: digest.toString('base64') } });
    });
    const posts: string[] = [];
    const onRequest = (r: { method(): string; url(): string }) => void (r.method() === 'POST' && posts.push(r.url()));
    page.on('request', onRequest);
    await page.locator(`#pending li[data-id="${id}"]`).locator('button.approve').click();
    await expect.poll(async () => page.textContent('#status')).toContain('names other targets than shown');
    expect(posts).toEqual([]);
    page.off('request', onRequest);
    await page.unroute('**/token-template?*');
  });

  it('denies with a reason, signed the same way', async () => {
    const body = writeIntent(100, 'agent.reporter');
    const d = await evaluate(body);
    const { id } = await cardFor(page, d['trace_id']);
    const card = page.locator(`#pending li[data-id="${id}"]`);
    await card.locator('button.deny').click(); // no reason yet: refused in the page
    expect(await page.textContent('#status')).toContain('needs a reason');
    await card.locator('input[name=reason]').fill('not during the freeze');
    await card.locator('button.deny').click();
    await card.locator('p.error').waitFor();
    expect(await card.locator('p.error').textContent()).toContain('Denied by alice');
    const retry = await evaluate(body);
    expect(retry['verdict']).not.toBe('allow');
    expect(retry['reason_codes']).toContain('approval_denied');
  });

  it('leaves a screenshot of the inbox and nothing outside the origin', async () => {
    await evaluate(writeIntent(200, 'agent.deployer'));
    await page.reload();
    await page.waitForSelector('#pending li[data-id]');
    await page.screenshot({ path: join(SHOTS, 'inbox.png') });
    const problems = await pageProblems(page);
    expect(problems).toEqual({ csp: [], errors: [] });
    expect(browser.requests.filter((u) => !u.startsWith(daemon.url))).toEqual([]);
    await page.close();
  });
});

describe('the decision console', () => {
  it('weighs well under 200 KB on a cold load', async () => {
    const cold = await launch(); // a fresh profile: nothing cached
    try {
      const page = await cold.context.newPage();
      const sizes: Promise<number>[] = [];
      page.on('requestfinished', (r) => {
        if (r.url().includes('/v1/decisions/stream')) return; // the event stream never finishes: not page weight
        sizes.push(r.sizes().then((s) => s.responseHeadersSize + s.responseBodySize));
      });
      await page.goto(`${daemon.url}/ui/console`);
      await page.waitForSelector('#rows tr');
      await page.waitForTimeout(200);
      const bytes = (await Promise.all(sizes)).reduce((a, b) => a + b, 0);
      console.log(`console page weight (cold, uncompressed, headers included, event stream excluded): ${bytes} bytes in ${sizes.length} responses`);
      expect(bytes).toBeLessThan(200 * 1024);
    } finally {
      await cold.close();
    }
  });

  it('filters by verdict, tool and identity, and shows a new decision live', async () => {
    await evaluate(intent('read-report'));
    await evaluate(intent('delete-database'));
    const page = await browser.context.newPage();
    await page.goto(`${daemon.url}/ui/console`);
    await page.waitForSelector('#rows tr');
    await page.waitForLoadState('networkidle').catch(() => undefined);
    const verdicts = async () => (await page.locator('#rows tr').evaluateAll((rows) => rows.map((r) => (r as unknown as { dataset: { verdict: string } }).dataset.verdict))) as string[];
    expect(new Set(await verdicts())).toEqual(new Set(['allow', 'block', 'require_approval']));

    await page.selectOption('select[name=verdict]', 'block');
    await page.click('#filters button[type=submit]');
    await expect.poll(verdicts).toEqual(expect.arrayContaining(['block']));
    await expect.poll(async () => new Set(await verdicts())).toEqual(new Set(['block']));
    expect(page.url()).toContain('verdict=block');

    await page.selectOption('select[name=verdict]', '');
    await page.fill('input[name=identity]', 'agent.reporter');
    await page.click('#filters button[type=submit]');
    const identities = async () => new Set(await page.locator('#rows tr td:nth-child(4)').allTextContents());
    await expect.poll(identities).toEqual(new Set(['agent.reporter']));

    await page.fill('input[name=identity]', '');
    await page.fill('input[name=tool]', 'fs.read_file');
    await page.click('#filters button[type=submit]');
    const tools = async () => new Set(await page.locator('#rows tr td:nth-child(3)').allTextContents());
    await expect.poll(tools).toEqual(new Set(['fs.read_file']));
    const before = await page.locator('#rows tr').count();
    const d = await evaluate(intent('read-report'));
    await page.locator(`#rows tr.fresh[data-trace-id="${d['trace_id']}"]`).first().waitFor();
    expect(await page.locator('#rows tr').count()).toBeGreaterThanOrEqual(before);
    await evaluate(intent('delete-database')); // filtered out: never shown
    await page.waitForTimeout(300);
    expect(await verdicts()).not.toContain('block');

    // Time: a window that starts tomorrow holds nothing, and has no live feed either.
    await page.fill('input[name=tool]', '');
    await page.fill('input[name=since]', new Date(Date.now() + 86_400_000).toISOString().slice(0, 19));
    await page.click('#filters button[type=submit]');
    await page.waitForSelector('#rows-empty:not([hidden])');
    await evaluate(intent('read-report'));
    await page.waitForTimeout(300);
    expect(await page.locator('#rows tr').count()).toBe(0);

    await page.click('#filters button[type=reset]');
    await expect.poll(async () => new Set(await verdicts()).size).toBe(3);
    await page.screenshot({ path: join(SHOTS, 'console.png'), fullPage: false });
    // Everything is still in the stream's replay: the store has nothing older to add, and no row twice.
    const shown = await page.locator('#rows tr').count();
    await page.click('#more');
    await page.waitForTimeout(500);
    expect(await page.locator('#rows tr').count()).toBe(shown);

    await page.locator(`#rows tr[data-trace-id="${d['trace_id']}"] a`).first().click();
    await page.waitForSelector('.sig-ok');
    expect(await page.textContent('#decision')).toContain('allow-reads');
    expect(await pageProblems(page)).toEqual({ csp: [], errors: [] });
    await page.close();
  });
});

describe('the policy view', () => {
  it('previews a change that loosens a recorded decision, loosenings first', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${daemon.url}/ui/policy`);
    await page.waitForSelector('#rules tr');
    const candidate = readFileSync(policy, 'utf8').replace(/(- name: approve-writes\n\s+priority: 30\n\s+effect: )require_approval/, '$1allow');
    expect(candidate).not.toBe(readFileSync(policy, 'utf8'));
    await page.fill('#candidate', candidate);
    await page.click('#preview button[type=submit]');
    await page.waitForSelector('#preview-summary');
    const first = page.locator('table.changes tbody tr').first();
    expect(await first.getAttribute('data-change')).toBe('policy_loosened');
    expect(await first.textContent()).toContain('fs.write_file');
    expect(await page.textContent('#preview-summary')).toMatch(/[1-9]\d* loosened/);
    // The rules table counts hits since start; the writes' rule has some.
    expect(Number(await page.textContent('#rules tr[data-rule="approve-writes"] td:last-child'))).toBeGreaterThan(0);
    await page.screenshot({ path: join(SHOTS, 'policy.png'), fullPage: true });
    await first.locator('a').click(); // the recorded decision behind the change
    await page.waitForSelector('.sig-ok');
    expect(await pageProblems(page)).toEqual({ csp: [], errors: [] });
    await page.close();
  });
});

describe('parity with ward check, and the status badge on every page', () => {
  /** `ward check --json`'s findings (by kind and rule) and gap warnings (by code) for a policy text. */
  function wardCheck(text: string): { kinds: string[]; gaps: string[] } {
    const at = join(tempDir('ward-check-'), 'candidate.yaml');
    writeFileSync(at, text);
    const r = spawnSync(process.execPath, [WARD, 'check', '--policy', at, '--json'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { findings: { kind: string; rule: string }[]; gap_warnings: { code: string }[] };
    return { kinds: out.findings.map((f) => `${f.kind}:${f.rule}`), gaps: out.gap_warnings.map((g) => g.code) };
  }

  const shown = async (page: Page, list: string) => ({
    kinds: await page.locator(`${list} li[data-kind]`).evaluateAll((lis) => lis.map((li) => `${li.getAttribute('data-kind')}:${li.querySelectorAll('code')[1]?.textContent ?? ''}`)),
    gaps: await page.locator(`${list} li[data-gap]`).evaluateAll((lis) => lis.map((li) => li.getAttribute('data-gap'))),
  });

  it('the preview lists the candidate\'s findings and gap warnings exactly as ward check does', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${daemon.url}/ui/policy`);
    await page.waitForSelector('#rules tr');
    // The policy in force: ward check's gap warning is on the page, not "no findings".
    await page.waitForSelector('#findings li[data-gap]');
    expect(await shown(page, '#findings')).toEqual(wardCheck(readFileSync(policy, 'utf8')));
    // The candidate: valid, no rule findings, three gap warnings from ward check.
    const candidate = readFileSync(policy, 'utf8').replace('default_verdict: require_approval', 'default_verdict: allow').replace(/(fail_closed:\n\s+enabled: )true/, '$1false');
    const expected = wardCheck(candidate);
    expect(expected.gaps).toEqual(['default_allow', 'fail_closed_disabled', 'lists_escapable_by_unmapped_arguments']);
    await page.fill('#candidate', candidate);
    await page.click('#preview button[type=submit]');
    await page.waitForSelector('#preview-findings li');
    expect(await shown(page, '#preview-findings')).toEqual(expected);
    expect(await page.textContent('#preview-findings')).not.toContain('no findings');
    expect(await page.textContent('#preview-findings')).toContain('fix: set default_verdict: block');
    expect(await pageProblems(page)).toEqual({ csp: [], errors: [] });
    await page.close();
  });

  it('shows live, not offline, on the policy and decision pages while the daemon is up', async () => {
    const d = await evaluate(intent('read-report'));
    for (const path of ['/ui/policy', `/ui/decision?id=${encodeURIComponent(d['trace_id'])}`, '/ui/console', '/ui']) {
      const page = await browser.context.newPage();
      await page.goto(`${daemon.url}${path}`);
      await page.waitForSelector('#live.on', { timeout: 10_000 });
      expect(await page.textContent('#live'), path).toBe('live');
      expect(await pageProblems(page)).toEqual({ csp: [], errors: [] });
      await page.close();
    }
  });

  it('counts a new decision on the open policy page (the feed keeps hits current)', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${daemon.url}/ui/policy`);
    await page.waitForSelector('#live.on');
    const cell = '#rules tr[data-rule="approve-writes"] td:last-child';
    const before = Number(await page.textContent(cell));
    await evaluate(writeIntent(9001));
    // A function, not a string: the page's CSP (script-src 'self') forbids evaluating strings.
    await page.waitForFunction(({ sel, n }) => Number((globalThis as any).document.querySelector(sel)?.textContent) > n, { sel: cell, n: before }, { timeout: 10_000 });
    expect(Number(await page.textContent(cell))).toBe(before + 1);
    await page.close();
  });
});

describe('after a restart', () => {
  it('pages older decisions from the store', async () => {
    await daemon.stop();
    daemon = await startDaemon(['--policy', policy, '--state-dir', join(dir, '.ward'), '--approver-keys', approvers], { cwd: dir });
    const page = await browser.context.newPage();
    await page.goto(`${daemon.url}/ui/console?verdict=block`);
    await page.waitForSelector('#live.on');
    expect(await page.locator('#rows tr').count()).toBe(0); // the new process's stream has nothing yet
    await page.click('#more');
    await page.waitForSelector('#rows tr');
    const verdicts = await page.locator('#rows tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-verdict')));
    expect(new Set(verdicts)).toEqual(new Set(['block']));
    expect(await page.locator('#rows tr td:nth-child(3)').allTextContents()).toContain('fs.delete_file');
    await page.locator('#rows tr a').first().click();
    await page.waitForSelector('.sig-ok');
    expect(await pageProblems(page)).toEqual({ csp: [], errors: [] });
    await page.close();
  });
});
