import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Run ES module code in separate Node processes at the same time, for tests of cross-process
 * races. Child processes cannot load TypeScript, so they import the build in dist/ (`npm test`
 * builds first; run `npm run build` before running these tests alone).
 */
export function distModule(path: string): string {
  const file = fileURLToPath(new URL(`../../dist/${path}`, import.meta.url));
  if (!existsSync(file)) throw new Error(`${file} is missing: run npm run build first`);
  return pathToFileURL(file).href;
}

export function runConcurrently(code: string, args: readonly string[][]): Promise<string[]> {
  return Promise.all(
    args.map(
      (argv) =>
        new Promise<string>((resolvePromise, reject) => {
          const child = spawn(process.execPath, ['--input-type=module', '-e', code, '--', ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
          let out = '';
          let err = '';
          child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
          child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
          child.on('error', reject);
          child.on('close', (status) => (status === 0 ? resolvePromise(out) : reject(new Error(`child exited ${status}: ${err}`))));
        }),
    ),
  );
}
