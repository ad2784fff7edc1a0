import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ward, WardBlockedError, intent } from '../../src/index.js';
import { tempDir, v7PrivateKeyFile } from '../cli/run.js';

/*
 * Issue 26, finding 4, end to end: a real fetch through guardTool. `http://0:<port>/` reaches a
 * server listening on 127.0.0.1; under a policy that denies 127.0.0.1 the server must never see
 * the request. The control run (a policy that denies nothing there) shows the fetch does reach it.
 */

let server: Server;
let port: number;
const received: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    received.push(req.url ?? '');
    res.end('secret from loopback');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function wardWith(denylist: string): Ward {
  const dir = tempDir();
  const policy = join(dir, 'policy.yaml');
  writeFileSync(
    policy,
    `schema_id: gait.gate.policy\nschema_version: 1.0.0\ndefault_verdict: allow\nrules:\n  - name: net\n    effect: allow\n    match: { target_kinds: [url] }\n    endpoint:\n      domain_denylist: ${denylist}\n`,
  );
  return new Ward({ policy, cwd: dir, signingKey: v7PrivateKeyFile() });
}

function guardedFetch(ward: Ward): (url: string) => Promise<string> {
  return ward.guardTool(
    async (url: string) => (await fetch(url)).text(),
    (url: string) =>
      intent.tool('http.get').args({ url }).target({ kind: 'url', value: url, operation: 'read' }).context({ identity: 'agent', workspace: '/w', risk_class: 'low' }).build(),
  );
}

describe('loopback spellings through the SDK', () => {
  it('the control: with no loopback entry, http://0:<port>/ reaches the server on 127.0.0.1', async () => {
    received.length = 0;
    await expect(guardedFetch(wardWith('[pastebin.com]'))(`http://0:${port}/control`)).resolves.toBe('secret from loopback');
    expect(received).toEqual(['/control']);
  });

  it('a policy denying 127.0.0.1 blocks http://0:<port>/, 0.0.0.0 and 127.0.0.2: the server sees nothing', async () => {
    received.length = 0;
    const fetchGuarded = guardedFetch(wardWith('["127.0.0.1", localhost, "::1"]'));
    for (const url of [`http://0:${port}/a`, `http://0.0.0.0:${port}/b`, `http://127.0.0.2:${port}/c`, `http://0x7f000001:${port}/d`, `http://[::ffff:127.0.0.1]:${port}/e`]) {
      const err = await fetchGuarded(url).catch((e: unknown) => e);
      expect(err, url).toBeInstanceOf(WardBlockedError);
      expect((err as WardBlockedError).reasonCodes).toContain('endpoint_domain_denied');
    }
    expect(received).toEqual([]);
  });

  it('a range denies a name by the address it resolves to (the real resolver, /etc/hosts), and the trace records it', async () => {
    received.length = 0;
    const ward = wardWith('["127.0.0.0/8"]');
    const err = await guardedFetch(ward)(`http://localhost:${port}/f`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WardBlockedError);
    const blocked = err as WardBlockedError;
    expect(blocked.reasonCodes).toContain('endpoint_resolved_address_denied');
    expect(received).toEqual([]);
    const trace = JSON.parse(readFileSync(blocked.tracePath, 'utf8'));
    const note = trace.canonical_targets.find((n: { kind: string }) => n.kind === 'url');
    expect(note.resolved_addresses).toContain('127.0.0.1');
  });
});
