/**
 * The WebUI's static files, from the package (issue 16: no CDN, no download):
 * the pages in ./static beside this module (copied next to the compiled JS in
 * a release bundle; the source tree in a development checkout) and the
 * browser builds of preact, preact/hooks and htm from node_modules, served
 * under /vendor/. Read once at start and kept in memory with their gzip
 * form (a few tens of KB in all).
 *
 * Why preact + htm: together about 7 KB gzipped, ES modules the browser
 * loads as they are (an import map names them), so there is no bundler and
 * no build step, and components with hooks keep the pages small and readable.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { INSTALL_ROOT } from '../../kernel/kernel.js';
import { HomeAgentError } from '../../kernel/errors.js';

/** One file ready to serve. */
export interface Asset {
  body: Buffer;
  gzip: Buffer;
  type: string;
  etag: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** The folder of a file that sits beside this module in the source tree (`name`), wherever the code runs from. */
export function besideModule(name: string): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  for (const dir of [path.join(here, name), path.join(INSTALL_ROOT, 'src', 'plugins', 'webui', name)]) if (existsSync(dir)) return dir;
  throw new HomeAgentError('WEBUI_FILES', `the WebUI's ${name} is missing from the installation (looked beside ${here} and in ${INSTALL_ROOT}/src/plugins/webui)`);
}

function asset(body: Buffer, file: string): Asset {
  return { body, gzip: gzipSync(body, { level: 9 }), type: TYPES[path.extname(file)] ?? 'application/octet-stream', etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

/** A package's folder in node_modules (the nearest one with its package.json). */
function packageDir(name: string): string {
  const require = createRequire(import.meta.url);
  let dir = path.dirname(require.resolve(name));
  while (!existsSync(path.join(dir, 'package.json')) || (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string }).name !== name) {
    const up = path.dirname(dir);
    if (up === dir) throw new HomeAgentError('WEBUI_FILES', `cannot find the ${name} package (npm ci installs it)`);
    dir = up;
  }
  return dir;
}

/** The browser modules under /vendor/: URL path → file in node_modules. */
export function vendorFiles(): Record<string, string> {
  const preact = packageDir('preact');
  return {
    '/vendor/preact.mjs': path.join(preact, 'dist', 'preact.mjs'),
    '/vendor/hooks.mjs': path.join(preact, 'hooks', 'dist', 'hooks.mjs'),
    '/vendor/htm.mjs': path.join(packageDir('htm'), 'dist', 'htm.module.js'),
  };
}

/**
 * Every file to serve, by URL path: `/` (index.html), `/login` (login.html),
 * `/static/<file>` for the rest of ./static, and the vendor modules.
 * Throws HomeAgentError WEBUI_FILES when a file is missing.
 */
export function loadAssets(): Map<string, Asset> {
  const dir = besideModule('static');
  const out = new Map<string, Asset>();
  const walk = (d: string, rel: string) => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) walk(p, `${rel}${name}/`);
      else out.set(`/static/${rel}${name}`, asset(readFileSync(p), p));
    }
  };
  walk(dir, '');
  const index = out.get('/static/index.html');
  const login = out.get('/static/login.html');
  if (!index || !login) throw new HomeAgentError('WEBUI_FILES', `index.html or login.html is missing from ${dir}`);
  out.set('/', index);
  out.set('/login', login);
  for (const [url, file] of Object.entries(vendorFiles())) {
    try {
      out.set(url, asset(readFileSync(file), file));
    } catch (err) {
      throw new HomeAgentError('WEBUI_FILES', `cannot read ${file} (npm ci installs it): ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return out;
}

/** The Content-Security-Policy `script-src` hashes of the inline scripts (the import map) of `html`. */
export function inlineScriptHashes(html: string): string[] {
  const out: string[] = [];
  for (const m of html.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)) if (m[1]!.trim()) out.push(`'sha256-${createHash('sha256').update(m[1]!).digest('base64')}'`);
  return out;
}
