/**
 * `homeagent listen` keeps every spoken reply (a newcomer listened to the
 * same yes.wav for two questions and the second reply overwrote the first),
 * and a file name from the client never leaves the listen folder.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { replyBaseName, writeReplyWav } from '../../src/service/voice-wiring.js';

test('a reply per listen, named by the input and the time; the same name in the same second gets -2', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ha-reply-'));
  try {
    const at = new Date(Date.UTC(2026, 11, 3, 7, 5, 9));
    const a = writeReplyWav(dir, 'yes.wav', Buffer.from('one'), at);
    const b = writeReplyWav(dir, 'yes.wav', Buffer.from('two'), at);
    assert.equal(path.basename(a), 'yes.20261203-070509.reply.wav');
    assert.equal(path.basename(b), 'yes.20261203-070509-2.reply.wav');
    assert.equal(readFileSync(a, 'utf8'), 'one', 'the first reply is kept');
    assert.equal(readFileSync(b, 'utf8'), 'two');
    const c = writeReplyWav(dir, '../../etc/evil.WAV', Buffer.from('x'), at);
    assert.equal(path.dirname(c), dir, 'a path in the name does not leave the folder');
    assert.equal(readdirSync(dir).length, 3);
    // Names a client may send that no file system takes as they are (a newcomer's: the command acted, then the
    // write failed and the report was lost).
    const long = writeReplyWav(dir, `${'B'.repeat(240)}.wav`, Buffer.from('x'), at);
    assert.ok(Buffer.byteLength(path.basename(long)) < 255, path.basename(long));
    assert.equal(path.basename(writeReplyWav(dir, 'a\u0000b.wav', Buffer.from('x'), at)), 'ab.20261203-070509.reply.wav');
    assert.equal(path.basename(writeReplyWav(dir, '', Buffer.from('x'), at)), 'utterance.20261203-070509.reply.wav');
    assert.equal(path.basename(writeReplyWav(dir, '..', Buffer.from('x'), at)), 'utterance.20261203-070509-2.reply.wav');
    assert.equal(replyBaseName('.hidden.wav'), 'hidden');
    assert.equal(Buffer.byteLength(replyBaseName('灯'.repeat(60))), 99, 'cut on a character boundary');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
