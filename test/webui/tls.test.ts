/**
 * The WebUI's self-signed certificate (issue 16 "HTTPS by default"): made at
 * the first start for the box's names and addresses, kept across starts, and
 * made again when the box's names or addresses change (a new DHCP lease, a
 * new host name) or its end is near, saying why; the user's own pair is read
 * as it is, and a half-set pair is refused naming both settings. Uses
 * Debian's openssl, as the box does.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadOrMakeCertificate, SELF_SIGNED_DAYS, uncovered } from '../../src/plugins/webui/tls.js';

test('made once for the names, kept, made again for a new address or near its end; the own pair is read as it is', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-tls-'));
  try {
    const names = { dns: ['homebox', 'homebox.local', 'localhost'], ips: ['127.0.0.1', '::1', '192.168.1.30'] };
    const first = await loadOrMakeCertificate(dir, {}, Date.now(), names);
    assert.equal(first.selfSigned, true);
    assert.equal(first.renewed, undefined);
    assert.deepEqual(uncovered(first.cert, names), []);
    const x = new X509Certificate(first.cert);
    assert.ok(x.checkIP('192.168.1.30') && x.checkHost('homebox.local'));
    // The next start keeps it: the same fingerprint.
    const again = await loadOrMakeCertificate(dir, {}, Date.now(), names);
    assert.equal(again.fingerprint256, first.fingerprint256);
    // A new address from the router: made again for it, and it says why.
    const moved = { ...names, ips: [...names.ips.filter((ip) => ip !== '192.168.1.30'), '192.168.1.77'] };
    assert.deepEqual(uncovered(first.cert, moved), ['192.168.1.77']);
    const renewed = await loadOrMakeCertificate(dir, {}, Date.now(), moved);
    assert.notEqual(renewed.fingerprint256, first.fingerprint256);
    assert.match(renewed.renewed!, /names or addresses changed \(not covered: 192\.168\.1\.77\)/);
    assert.deepEqual(uncovered(renewed.cert, moved), []);
    // Within 30 days of its end: made again.
    const late = await loadOrMakeCertificate(dir, {}, Date.now() + (SELF_SIGNED_DAYS - 10) * 86_400_000, moved);
    assert.match(late.renewed!, /near its end/);
    // The user's own pair is served as it is (never renewed); half a pair is refused naming both settings.
    const own = await loadOrMakeCertificate(path.join(dir, 'other'), { certFile: path.join(dir, 'cert.pem'), keyFile: path.join(dir, 'key.pem') }, Date.now(), { dns: ['elsewhere'], ips: [] });
    assert.equal(own.selfSigned, false);
    assert.equal(own.renewed, undefined);
    await assert.rejects(loadOrMakeCertificate(dir, { certFile: path.join(dir, 'cert.pem') }), /cert_file and plugin\.webui\.key_file must be set together/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
