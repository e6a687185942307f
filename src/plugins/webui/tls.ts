/**
 * The WebUI's TLS certificate (issue 16 "HTTPS by default"): the user's own
 * (plugin.webui.cert_file / key_file), or a self-signed one for the box's
 * names and addresses, made at first start with Debian's `openssl` command and
 * kept in `<data dir>/webui/` (cert.pem, key.pem mode 0600), so its SHA-256
 * fingerprint stays the same and a person checks it once
 * (`homeagent webui link` prints it).
 *
 * Why the openssl CLI and not an npm library: it is on every Debian and
 * Raspberry Pi OS image (scripts/setup.sh installs it), makes a P-256 key in
 * milliseconds natively (the pure-JS `selfsigned`/node-forge makes RSA keys,
 * seconds on a Pi), and adds no dependency; Node itself parses the result
 * (crypto.X509Certificate) for the fingerprint and names.
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { HomeAgentError, errorMessage } from '../../kernel/errors.js';

const run = promisify(execFile);

/** Days a self-signed certificate is valid (Apple's platforms refuse server certificates valid longer than 825 days). */
export const SELF_SIGNED_DAYS = 825;
/** A self-signed certificate this close to its end (ms) is made again at start. */
const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;

/** The certificate the WebUI serves. */
export interface WebCertificate {
  /** PEM text of the certificate (chain) and its private key. */
  cert: string;
  key: string;
  /** SHA-256 fingerprint, colon-separated upper-case hex (as browsers show it). */
  fingerprint256: string;
  /** True when HomeAgent made it (self-signed); false for the user's own. */
  selfSigned: boolean;
  /** Where it was read from. */
  certFile: string;
  /** The names and addresses it is valid for (subjectAltName: `DNS:x`, `IP Address:y`). */
  subjectAltName: string;
  /** End of validity (ms since the epoch). */
  validTo: number;
  /** Set when the self-signed certificate was made again at this start, saying why (the fingerprint changed). */
  renewed?: string;
}

/** The box's names and addresses for a certificate: its host name, `<name>.local` (mDNS), localhost, and every interface address but link-local IPv6. */
export function boxNames(): { dns: string[]; ips: string[] } {
  const host = os.hostname().toLowerCase();
  const dns = [...new Set([host, host.includes('.') ? '' : `${host}.local`, 'localhost'].filter((n) => /^[a-z0-9.-]+$/.test(n)))];
  const ips = new Set<string>(['127.0.0.1', '::1']);
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) {
      if (a.family === 'IPv6' && a.address.toLowerCase().startsWith('fe80')) continue;
      ips.add(a.address);
    }
  }
  return { dns, ips: [...ips] };
}

/**
 * The certificate to serve. With `certFile` and `keyFile` set, those are read
 * (HomeAgentError WEBUI_CERT when either is missing, unreadable or not PEM,
 * naming the file). Otherwise the self-signed one in `dir` is read, or made
 * when absent, unreadable, within 30 days of its end, or not valid for every
 * one of `names` (default boxNames(): the box got a new address or host
 * name); `renewed` then says why.
 * Throws HomeAgentError WEBUI_CERT when `openssl` fails or is missing.
 */
export async function loadOrMakeCertificate(dir: string, own: { certFile?: string; keyFile?: string } = {}, now = Date.now(), names: { dns: string[]; ips: string[] } = boxNames()): Promise<WebCertificate> {
  if (own.certFile || own.keyFile) {
    if (!own.certFile || !own.keyFile) throw new HomeAgentError('WEBUI_CERT', 'plugin.webui.cert_file and plugin.webui.key_file must be set together (or both left empty for the self-signed certificate)');
    return readPair(own.certFile, own.keyFile, false);
  }
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  if (existsSync(certFile) && existsSync(keyFile)) {
    let c: WebCertificate | undefined;
    try {
      c = readPair(certFile, keyFile, true);
    } catch {
      /* unreadable: made again below */
    }
    if (c) {
      // Made again when near its end, or when the box's names or addresses changed (a new DHCP lease, a new host name).
      const missing = uncovered(c.cert, names);
      if (c.validTo - now > RENEW_BEFORE_MS && missing.length === 0) return c;
      const made = await remake();
      return { ...made, renewed: missing.length ? `the box's names or addresses changed (not covered: ${missing.join(', ')})` : 'the old one was near its end' };
    }
  }
  return remake();

  async function remake(): Promise<WebCertificate> {
    await makeSelfSigned(dir, names);
    return readPair(certFile, keyFile, true);
  }
}

/** The names and addresses of `names` that certificate `pem` is not valid for (X509Certificate.checkHost / checkIP). */
export function uncovered(pem: string, names: { dns: string[]; ips: string[] }): string[] {
  const x = new X509Certificate(pem);
  return [...names.dns.filter((n) => x.checkHost(n, { subject: 'never' }) === undefined), ...names.ips.filter((ip) => x.checkIP(ip) === undefined)];
}

function readPair(certFile: string, keyFile: string, selfSigned: boolean): WebCertificate {
  let cert: string;
  let key: string;
  try {
    cert = readFileSync(certFile, 'utf8');
  } catch (err) {
    throw new HomeAgentError('WEBUI_CERT', `cannot read the WebUI certificate ${certFile}: ${errorMessage(err)}`);
  }
  try {
    key = readFileSync(keyFile, 'utf8');
  } catch (err) {
    throw new HomeAgentError('WEBUI_CERT', `cannot read the WebUI private key ${keyFile}: ${errorMessage(err)}`);
  }
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(key)) throw new HomeAgentError('WEBUI_CERT', `${keyFile} is not a PEM private key`);
  let x: X509Certificate;
  try {
    x = new X509Certificate(cert);
  } catch (err) {
    throw new HomeAgentError('WEBUI_CERT', `${certFile} is not a PEM certificate: ${errorMessage(err)}`);
  }
  return { cert, key, fingerprint256: x.fingerprint256, selfSigned, certFile, subjectAltName: x.subjectAltName ?? '', validTo: Date.parse(x.validTo) };
}

/** Make `<dir>/cert.pem` and `<dir>/key.pem` (P-256, SELF_SIGNED_DAYS days) for `names`; written beside and renamed into place. */
async function makeSelfSigned(dir: string, names: { dns: string[]; ips: string[] }): Promise<void> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmpCert = path.join(dir, `cert.pem.${process.pid}.tmp`);
  const tmpKey = path.join(dir, `key.pem.${process.pid}.tmp`);
  const san = [...names.dns.map((n) => `DNS:${n}`), ...names.ips.map((ip) => `IP:${ip}`)].join(',');
  const cn = names.dns[0] ?? 'homeagent';
  try {
    await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', tmpKey, '-out', tmpCert, '-days', String(SELF_SIGNED_DAYS), '-subj', `/O=HomeAgent/CN=${cn}`, '-addext', `subjectAltName=${san}`, '-addext', 'extendedKeyUsage=serverAuth'], { timeout: 30_000 });
    chmodSync(tmpKey, 0o600);
    renameSync(tmpKey, path.join(dir, 'key.pem'));
    renameSync(tmpCert, path.join(dir, 'cert.pem'));
  } catch (err) {
    rmSync(tmpCert, { force: true });
    rmSync(tmpKey, { force: true });
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    throw new HomeAgentError('WEBUI_CERT', missing ? 'cannot make the WebUI certificate: the openssl command is not installed (apt-get install openssl), or set plugin.webui.https to false' : `cannot make the WebUI certificate with openssl: ${errorMessage(err)}`);
  }
}
