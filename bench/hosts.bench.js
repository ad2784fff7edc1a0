// Host lists that name addresses and classes (issue 26, finding 4): what they add to evaluate() on
// a URL call, and what resolving the call's host name adds on top, at the edge. Same run, rounds
// interleaved; the baseline is the same call under a denylist of host names only (the reference's
// kind of list, nothing to resolve).
//
// - names only: `domain_denylist: [pastebin.com, "*.pastebin.com"]`
// - classes: `[class:metadata, class:loopback, pastebin.com, "*.pastebin.com"]`, no resolution passed
//   (a library caller's pure evaluate)
// - classes + resolved: the same, with the host's resolved addresses passed in (what every host does)
// - resolveIntentHosts (cached) + evaluate: the whole edge step with a warm resolver cache, as in a
//   long-running host (daemon, proxy, SDK); a cold lookup costs what the system resolver costs.

import { evaluate, nowUTC, parsePolicyYaml } from '../dist/index.js';
import { HostResolver, resolveIntentHosts } from '../dist/decision/host-resolution.js';

const policy = (list) =>
  parsePolicyYaml(`schema_id: gait.gate.policy
schema_version: 1.0.0
default_verdict: allow
rules:
  - name: net
    effect: allow
    match: { target_kinds: [url] }
    endpoint:
      domain_denylist: ${list}
`);

const intent = {
  schema_id: 'gait.gate.intent_request',
  schema_version: '1.0.0',
  created_at: '2026-02-18T00:00:00Z',
  producer_version: 'bench',
  tool_name: 'http.get',
  args: { url: 'https://api.example.com/v1/items?page=2' },
  targets: [{ kind: 'url', value: 'https://api.example.com/v1/items?page=2', operation: 'read' }],
  arg_provenance: [{ arg_path: '$.url', source: 'user' }],
  context: { identity: 'alice', workspace: '/tmp/work', risk_class: 'high', session_id: 's1' },
};

export default async function hostsBench(h) {
  const now = nowUTC();
  const names = policy('[pastebin.com, "*.pastebin.com"]');
  const classes = policy('[class:metadata, class:loopback, pastebin.com, "*.pastebin.com"]');
  const resolver = new HostResolver({ lookup: async () => ['93.184.216.34'], ttlMs: 3_600_000 });
  const resolved = await resolveIntentHosts(classes.policy, [intent], resolver);
  for (const [p, opts] of [[names, {}], [classes, {}], [classes, { resolvedHosts: resolved }]]) {
    if (evaluate(p, intent, { now, ...opts }).verdict !== 'allow') throw new Error('the bench call must be allowed');
  }
  await h.suite(
    'hosts · evaluate a URL call under a domain denylist',
    [
      ['names only', () => evaluate(names, intent, { now })],
      ['classes', () => evaluate(classes, intent, { now })],
      ['classes + resolved', () => evaluate(classes, intent, { now, resolvedHosts: resolved })],
      [
        'resolveIntentHosts (cached) + evaluate',
        async () => evaluate(classes, intent, { now, resolvedHosts: await resolveIntentHosts(classes.policy, [intent], resolver) }),
      ],
    ],
    { baseline: 'names only' },
  );
}
