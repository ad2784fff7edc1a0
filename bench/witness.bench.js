// The witness and the result firewall per proxied call, in process (issue 27): what one tools/call
// costs the proxy beyond forwarding — match() of the call's arguments against a session's memory,
// remember() of its result, inspectResult() of the result with every detector on. Set
// WARD_BENCH_BEFORE to another build's dist/ directory (e.g. a copy of main's before a change) to
// measure it in the same run, interleaved, for a before/after ratio.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dists = [['', '../dist']];
if (process.env.WARD_BENCH_BEFORE) dists.push(['before ', pathToFileURL(path.resolve(process.env.WARD_BENCH_BEFORE)).href]);

const POLICY = `results:
  credentials: { action: redact }
  invisible: { action: redact }
  pii: { action: redact, patterns: [{ name: us_ssn, regex: '\\\\b\\\\d{3}-\\\\d{2}-\\\\d{4}\\\\b' }] }
  oversize: { action: block, max_bytes: 1048576 }
`;

/** A 4 KiB, 64-line result: prose with ids, paths and a URL per line (what a file read or a search returns). */
function resultText(seed) {
  const lines = [];
  for (let i = 0; i < 64; i++) lines.push(`line ${i} of ${seed}: see /srv/app/${seed}/file-${i}.txt id=${randomBytes(9).toString('base64url')} https://x.example/${i}`);
  return lines.join('\n').slice(0, 4096);
}

/** A 4 KiB base64 argument (an upload): the same for every build measured. */
const blobArgs = { body: randomBytes(3072).toString('base64') };

async function load(prefix, dir) {
  const { TaintMemory } = await import(`${dir}/witness/taint.js`);
  const { inspectResult } = await import(`${dir}/witness/results.js`);
  const { parsePolicyYaml } = await import(`${dir}/policy/index.js`);
  const config = parsePolicyYaml(POLICY).policy.results;
  const mem = new TaintMemory(undefined, new Uint8Array(32).fill(1));
  // A session that has seen 2,000 values (about 30 results).
  for (let i = 0; i < 30; i++) mem.remember({ content: [{ type: 'text', text: resultText(`s${i}`) }] }, { traceId: `t${i}`, toolName: 'read_file' });
  const result = { content: [{ type: 'text', text: resultText('r') }] };
  const smallArgs = { path: '/home/user/project/src/index.ts', mode: 'utf8' };
  const proseArgs = { url: 'https://api.example.com/v1/messages', body: `Summary of the report. ${'The quarterly numbers look fine, nothing unusual here. '.repeat(70)}`.slice(0, 4096) };
  let n = 0;
  return [
    [`${prefix}match() small arguments`, () => mem.match(smallArgs)],
    [`${prefix}match() 4 KiB prose argument`, () => mem.match(proseArgs)],
    [`${prefix}match() 4 KiB base64 argument`, () => mem.match(blobArgs)],
    [`${prefix}remember() 4 KiB result`, () => mem.remember(result, { traceId: `r${n++ % 50}`, toolName: 'read_file' })],
    [`${prefix}inspectResult() 4 KiB result`, () => inspectResult(result, config)],
  ];
}

export default async function (h) {
  if (!h.matches('witness · per call', ['match', 'remember', 'inspectResult'])) return;
  const sets = [];
  for (const [prefix, dir] of dists) sets.push(await load(prefix, dir));
  const payload = { content: [{ type: 'text', text: resultText('b') }] };
  // Interleaved: each case next to its "before" twin.
  const cases = [['JSON.stringify 4 KiB result (baseline)', () => JSON.stringify(payload)]];
  for (let i = 0; i < sets[0].length; i++) for (const set of sets) cases.push(set[i]);
  await h.suite('witness · per call (session with ~2,000 values)', cases, { baseline: 'JSON.stringify 4 KiB result (baseline)', alloc: false });
}
