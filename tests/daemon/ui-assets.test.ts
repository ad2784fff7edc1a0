import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP, loadConsoleAssets, resolveAsset } from '../../src/daemon/console/assets.js';
import { tempDir } from '../cli/run.js';
import { call, startDaemon, workdir, type DaemonChild } from './helpers.js';

let daemon: DaemonChild;

beforeAll(async () => {
  const w = workdir();
  daemon = await startDaemon(['--policy', w.policy, '--state-dir', w.state], { cwd: w.dir });
});

afterAll(async () => {
  await daemon?.stop();
});

describe('console assets under /ui', () => {
  it('serves the inbox at /ui with the CSP and the security headers', async () => {
    const r = await call(daemon.url, '/ui');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.headers['referrer-policy']).toBe('no-referrer');
    expect(r.headers['cache-control']).toBe('no-cache');
    expect(r.text).toContain('Waiting for approval');
    expect(r.text).not.toMatch(/<script(?![^>]*\bsrc=)/); // no inline script
    expect(r.text).not.toMatch(/\sstyle=|<style/); // no inline style
  });

  it('gives each file its type, short page names, and 304 for an unchanged file', async () => {
    expect((await call(daemon.url, '/ui/app.css')).headers['content-type']).toBe('text/css; charset=utf-8');
    expect((await call(daemon.url, '/ui/inbox.js')).headers['content-type']).toBe('text/javascript; charset=utf-8');
    const page = await call(daemon.url, '/ui/console');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<title>Decision console');
    const again = await call(daemon.url, '/ui/console.html', { headers: { 'if-none-match': String(page.headers['etag']) } });
    expect(again.status).toBe(304);
    const head = await call(daemon.url, '/ui/app.css', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
  });

  it('refuses traversal, unknown files and state changes', async () => {
    for (const path of ['/ui/../package.json', '/ui/%2e%2e/package.json', '/ui/..%2fpackage.json', '/ui/%2e%2e%2f%2e%2e%2fpackage.json', '/ui/a%5c..%5cpackage.json']) {
      const r = await call(daemon.url, path);
      expect([400, 404], path).toContain(r.status);
      expect(r.text).not.toContain('"name": "ward"');
    }
    expect((await call(daemon.url, '/ui/nope.js')).status).toBe(404);
    expect((await call(daemon.url, '/ui/.hidden')).status).toBe(404);
    expect((await call(daemon.url, '/ui/web/console/index.html')).status).toBe(404);
    const post = await call(daemon.url, '/ui', { method: 'POST', body: {} });
    expect(post.status).toBe(405);
    expect(post.json.ok).toBe(false);
  });

  it('refuses a foreign Origin like every other route', async () => {
    expect((await call(daemon.url, '/ui', { headers: { origin: 'http://evil.example' } })).status).toBe(403);
  });

  it('keeps only plain regular files from the directory', () => {
    const dir = tempDir('ward-ui-');
    writeFileSync(join(dir, 'index.html'), '<!doctype html>');
    writeFileSync(join(dir, '.secret.js'), 'x');
    writeFileSync(join(dir, 'notes.txt'), 'x');
    mkdirSync(join(dir, 'sub.js'));
    symlinkSync('/etc/hostname', join(dir, 'host.css'));
    const assets = loadConsoleAssets(dir);
    expect([...assets.keys()]).toEqual(['index.html']);
    expect(resolveAsset(assets, undefined)?.body.toString()).toBe('<!doctype html>');
    expect(resolveAsset(assets, 'index')).toBeDefined();
    expect(resolveAsset(assets, 'nope')).toBeUndefined();
    expect(loadConsoleAssets(join(dir, 'missing')).size).toBe(0);
  });
});
