import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { HttpError } from '../../edge/http-error.js';
import type { Exchange, Handler, Route } from '../routes.js';

/**
 * The console's static files (web/console) served under /ui.
 *
 * The directory is read once, when the routes are built: only regular files with a known type and
 * a plain name are kept, and a request can only name one of those in-memory entries. So no request
 * path ever reaches the file system (no traversal, no symlink surprises, no reading a file that
 * appeared later), and what the daemon serves is fixed for its lifetime, like its policy digest.
 */

/** The page's Content-Security-Policy: everything from this origin, nothing inline, no framing. */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** Plain file names only: no dots but the extension's, no separators, nothing hidden. */
const NAME = /^[a-z0-9][a-z0-9-]*\.(html|css|js|svg|png|ico)$/;

export interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/** web/console beside this package: three levels up from both src/daemon/console and dist/daemon/console. */
export const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL('../../../web/console/', import.meta.url));

/** Read the console's files; an absent directory gives none (the routes then answer 404). */
export function loadConsoleAssets(dir: string = DEFAULT_CONSOLE_DIR): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return assets;
  }
  for (const name of names.sort()) {
    if (!NAME.test(name)) continue;
    const file = `${dir.endsWith('/') ? dir : `${dir}/`}${name}`;
    if (!lstatSync(file).isFile()) continue; // no symlinks: what is served is what the package ships
    const body = readFileSync(file);
    const type = TYPES[name.slice(name.lastIndexOf('.'))]!;
    assets.set(name, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
  }
  return assets;
}

/**
 * Which file a path segment names: the file itself, or `console` for `console.html` (the pages'
 * own links use the short form). `/ui` itself is the inbox.
 */
export function resolveAsset(assets: ReadonlyMap<string, Asset>, segment: string | undefined): Asset | undefined {
  if (segment === undefined || segment === '') return assets.get('index.html');
  return assets.get(segment) ?? (/^[a-z0-9-]+$/.test(segment) ? assets.get(`${segment}.html`) : undefined);
}

/** Headers every console response carries (also set on the API's answers by G when wanted). */
export function securityHeaders(): Record<string, string> {
  return {
    'content-security-policy': CONSOLE_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
  };
}

function serve(assets: ReadonlyMap<string, Asset>): Handler {
  return async (_ctx, ex: Exchange, params) => {
    const asset = resolveAsset(assets, params['asset']);
    if (!asset) throw new HttpError('not_found', `no such console page: ${(ex.req.url ?? '').split('?', 1)[0]}`, { hint: 'the console starts at /ui' });
    // Revalidated every time (no build step, so names carry no content hash): a new daemon
    // version's files are picked up at once, and an unchanged file costs a 304.
    const headers: Record<string, string> = { ...securityHeaders(), 'cache-control': 'no-cache', etag: asset.etag };
    ex.exitCode = 0;
    if (ex.req.headers['if-none-match'] === asset.etag) {
      ex.status = 304;
      ex.res.writeHead(304, headers);
      ex.res.end();
      return;
    }
    ex.status = 200;
    ex.res.writeHead(200, { ...headers, 'content-type': asset.type, 'content-length': String(asset.body.length) });
    ex.res.end(ex.req.method === 'HEAD' ? undefined : asset.body);
  };
}

/**
 * `/ui` and `/ui/<file>`: public like the JWKS (the files hold no data; every piece of data the
 * pages show comes from the API, under its auth rules), but behind the same Host/Origin guard.
 */
export function consoleAssetRoutes(assets: ReadonlyMap<string, Asset> = loadConsoleAssets()): Route[] {
  const handler = serve(assets);
  const methods = { GET: handler, HEAD: handler };
  return [
    { name: 'console.ui', segments: ['ui'], methods, public: true },
    { name: 'console.ui', segments: ['ui', ':asset'], methods, public: true },
  ];
}
