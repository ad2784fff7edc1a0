import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

let bundled: Promise<string> | undefined;

/** Bundle the TypeScript child once per test file (Node 20 cannot run .ts directly). */
export function childScript(): Promise<string> {
  bundled ??= (async () => {
    // Inside the repo's node_modules so the bundle resolves the native and external packages.
    const cache = fileURLToPath(new URL('../../node_modules/.cache/', import.meta.url));
    mkdirSync(cache, { recursive: true });
    const out = join(mkdtempSync(join(cache, 'ward-child-')), 'child.mjs');
    await build({
      input: fileURLToPath(new URL('./child.ts', import.meta.url)),
      platform: 'node',
      external: [/^node:/, 'classic-level', 'fflate', 'canonicalize', 'yaml', 'ajv', 'ajv-formats', 'jose', 'commander'],
      output: { file: out, format: 'esm' },
      logLevel: 'silent',
    });
    return out;
  })();
  return bundled;
}

export interface Child {
  process: ChildProcess;
  lines: string[];
  /** Resolves when a line satisfying `predicate` has been printed. */
  waitFor(predicate: (line: string) => boolean): Promise<void>;
  exited: Promise<number | null>;
}

export async function startChild(command: string, stateDir: string): Promise<Child> {
  const script = await childScript();
  const child = spawn(process.execPath, [script, command, stateDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
  });
  const lines: string[] = [];
  const waiters: { predicate: (l: string) => boolean; resolve: () => void }[] = [];
  let buffer = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      lines.push(line);
      for (const w of [...waiters]) if (w.predicate(line)) w.resolve();
    }
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    process: child,
    lines,
    exited,
    waitFor: (predicate) =>
      lines.some(predicate)
        ? Promise.resolve()
        : new Promise((resolve, reject) => {
            waiters.push({ predicate, resolve });
            void exited.then((code) => reject(new Error(`child exited (${code}) before the expected line: ${stderr}`)));
          }),
  };
}
