// Paths as the kernel and the server resolve them, through `ward mcp proxy` in front of the real
// server-filesystem (issue 26, findings 2 and 3). The effect is asserted: the denied file's content
// never reaches the client, whichever name the call uses.
import { linkSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../cli/run.js';
import { FILESYSTEM, textOf, throughWard, wardOf } from '../../witness-proxy/helpers.js';

const SECRET = 'ward-paths-effect-secret';
const PUBLIC = 'ward-paths-effect-public';

let ws: string;
let policyFile: string;
let state: string;

beforeAll(() => {
  ws = realpathSync(tempDir('ward-paths-effect-'));
  mkdirSync(join(ws, 'secrets'));
  writeFileSync(join(ws, 'secrets', 'key.pem'), SECRET);
  writeFileSync(join(ws, 'notes.txt'), PUBLIC);
  symlinkSync('secrets', join(ws, 'pub'));
  linkSync(join(ws, 'secrets', 'key.pem'), join(ws, 'copy.pem'));
  const dir = tempDir('ward-paths-effect-state-');
  policyFile = join(dir, 'policy.yaml');
  writeFileSync(policyFile, `default_verdict: allow\nrules:\n  - name: no-secrets\n    effect: allow\n    endpoint:\n      path_denylist: ["${ws}/secrets/**"]\n`);
  state = join(dir, '.ward');
});

const CALLS: [string, string, () => Record<string, unknown>][] = [
  ['symlinked directory, absolute', 'read_text_file', () => ({ path: join(ws, 'pub', 'key.pem') })],
  ['symlinked directory, relative', 'read_text_file', () => ({ path: 'pub/key.pem' })],
  ['hard link, absolute', 'read_text_file', () => ({ path: join(ws, 'copy.pem') })],
  ['hard link, relative', 'read_text_file', () => ({ path: 'copy.pem' })],
  ['symlink among several files', 'read_multiple_files', () => ({ paths: [join(ws, 'notes.txt'), join(ws, 'pub', 'key.pem')] })],
  ['hard link among several files', 'read_multiple_files', () => ({ paths: ['copy.pem'] })],
];

describe('ward mcp proxy + server-filesystem: links', () => {
  it('blocks every other name of the denied file, and the secret never reaches the client; a plain file is still read', async () => {
    const p = await throughWard(['--policy', policyFile, '--state-dir', state, '--workspace', ws], [FILESYSTEM, ws], { cwd: ws });
    try {
      for (const [label, tool, args] of CALLS) {
        const res = await p.client.callTool({ name: tool, arguments: args() });
        expect(wardOf(res)['verdict'], label).toBe('block');
        expect(textOf(res) + JSON.stringify(res), label).not.toContain(SECRET);
      }
      const plain = await p.client.callTool({ name: 'read_text_file', arguments: { path: join(ws, 'notes.txt') } });
      expect(wardOf(plain)['verdict']).toBeUndefined();
      expect(textOf(plain)).toContain(PUBLIC);
    } finally {
      await p.close();
    }
  }, 60_000);
});

describe('ward mcp proxy + server-filesystem: no workspace, no relative paths', () => {
  it('started from / without --workspace, a relative path is not evaluable: blocked, the secret never reaches the client', async () => {
    // The documented desktop setup before --workspace: the client starts the proxy in /, and
    // server-filesystem resolves relative paths against its allowed directory, not against /.
    const p = await throughWard(['--policy', policyFile, '--state-dir', state], [FILESYSTEM, ws], { cwd: '/' });
    try {
      for (const path of ['secrets/key.pem', './secrets/key.pem', 'pub/key.pem']) {
        const res = await p.client.callTool({ name: 'read_text_file', arguments: { path } });
        expect(wardOf(res)['verdict'], path).toBe('block');
        expect(JSON.stringify(wardOf(res)['reason_codes']), path).toContain('endpoint_target_not_canonical');
        expect(textOf(res) + JSON.stringify(res), path).not.toContain(SECRET);
      }
      // Absolute paths are still decided, and the plain file still read.
      const denied = await p.client.callTool({ name: 'read_text_file', arguments: { path: join(ws, 'secrets', 'key.pem') } });
      expect(textOf(denied) + JSON.stringify(denied)).not.toContain(SECRET);
      const plain = await p.client.callTool({ name: 'read_text_file', arguments: { path: join(ws, 'notes.txt') } });
      expect(textOf(plain)).toContain(PUBLIC);
    } finally {
      await p.close();
    }
  }, 60_000);

  it('a relative denylist pattern cannot be placed without a workspace: path targets fail the list closed', async () => {
    const dir = tempDir('ward-paths-relative-policy-');
    const relativePolicy = join(dir, 'policy.yaml');
    writeFileSync(relativePolicy, 'default_verdict: allow\nrules:\n  - name: no-secrets\n    effect: allow\n    endpoint:\n      path_denylist: ["secrets/**"]\n');
    const p = await throughWard(['--policy', relativePolicy, '--state-dir', join(dir, '.ward')], [FILESYSTEM, ws], { cwd: '/' });
    try {
      const res = await p.client.callTool({ name: 'read_text_file', arguments: { path: join(ws, 'secrets', 'key.pem') } });
      expect(wardOf(res)['verdict']).toBe('block');
      expect(textOf(res) + JSON.stringify(res)).not.toContain(SECRET);
    } finally {
      await p.close();
    }
    // With --workspace the pattern is placed, and only the secret is denied.
    const q = await throughWard(['--policy', relativePolicy, '--state-dir', join(dir, '.ward'), '--workspace', ws], [FILESYSTEM, ws], { cwd: '/' });
    try {
      const secret = await q.client.callTool({ name: 'read_text_file', arguments: { path: 'secrets/key.pem' } });
      expect(wardOf(secret)['verdict']).toBe('block');
      expect(textOf(secret) + JSON.stringify(secret)).not.toContain(SECRET);
      const plain = await q.client.callTool({ name: 'read_text_file', arguments: { path: 'notes.txt' } });
      expect(textOf(plain)).toContain(PUBLIC);
    } finally {
      await q.close();
    }
  }, 60_000);
});
