// `npm ci` / `npm install` in this checkout run `prepare`, which builds dist/ for development.
// npm also runs it when another project installs this checkout by path (`npm install ../ward`):
// rebuilding there rewrites dist/ under every Ward process running from the checkout (a hook, a
// proxy, the CLI), which then crashes on half-written modules. So the build runs only when npm was
// started in this checkout, or when there is no dist/ yet (nothing can be running from it).
// Projects install the packed tarball (`npm pack`, docs/install.md), which carries dist/ prebuilt.
import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const real = (p) => (existsSync(p) ? realpathSync(p) : path.resolve(p));
const startedHere = process.env.INIT_CWD === undefined || real(process.env.INIT_CWD) === real(root);

if (!startedHere && existsSync(path.join(root, 'dist', 'index.js'))) {
  console.error(`ward: prepare skipped: installed by path from ${process.env.INIT_CWD}; dist/ is left as built (run \`npm run build\` in ${root} to rebuild)`);
} else {
  const built = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  process.exit(built.status ?? 1);
}
