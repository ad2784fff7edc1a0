// `ward serve` child processes and latency percentiles, for the daemon and cluster benchmarks.

import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Start `ward serve --listen 127.0.0.1:0 --json <args>`; resolves with the process and its URL. */
export function startServe(args, cwd, env = {}) {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [path.join(repo, 'bin', 'ward.js'), 'serve', '--listen', '127.0.0.1:0', '--json', ...args], {
      cwd,
      env: { ...process.env, WARD_STATE_DIR: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    proc.stderr.on('data', (d) => (err = (err + d.toString()).slice(-4000)));
    proc.stdout.on('data', (d) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve({ proc, url: JSON.parse(line).url });
    });
    proc.on('exit', (code) => reject(new Error(`ward serve exited ${code}: ${out}${err}`)));
  });
}

/** SIGTERM (graceful: traces in flight are written), resolved when it has exited. */
export function stopServe(d) {
  return new Promise((resolve) => {
    d.proc.removeAllListeners('exit');
    d.proc.on('exit', resolve);
    d.proc.kill('SIGTERM');
  });
}

/** The p-th percentile of an ascending array (nearest rank). */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * An OTLP/HTTP receiver on loopback that accepts every export (200, nothing decoded) and counts
 * requests and bytes: the collector of the `--otel` benchmarks. It runs in a process of its own, as
 * a collector does: in the bench's process, receiving the exports would take CPU from the client
 * whose latencies (or load) are being measured, and only in the export-on rounds.
 */
export async function otlpSink() {
  const child = spawn(process.execPath, ['-e', SINK_PROGRAM], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const port = await new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m.port));
    child.once('exit', (code) => reject(new Error(`the OTLP sink exited (${code})`)));
  });
  const stats = { requests: 0, bytes: 0 };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stats,
    close: () =>
      new Promise((resolve) => {
        child.once('message', (m) => {
          Object.assign(stats, m.stats);
          child.kill();
          resolve();
        });
        child.send('stats');
      }),
  };
}

const SINK_PROGRAM = `
const stats = { requests: 0, bytes: 0 };
const server = require('node:http').createServer((req, res) => {
  req.on('data', (c) => (stats.bytes += c.length));
  req.on('end', () => {
    stats.requests++;
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', () => process.send({ stats }));
`;
