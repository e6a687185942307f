/**
 * What the recogniser heard is the household's speech: at the default log
 * level (info) no line holds it (README, "Forgetting for real": logs at info
 * hold no conversation text; a newcomer found the `stt: decoded` line's
 * `hypothesis` there). At debug the `stt: heard` line has it, for a
 * maintainer who turns debug on. Run in a child process: the log level is
 * read when the logger is made.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const exec = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const SCRIPT = `
const { PocketsphinxStt } = await import('./src/voice/stt/pocketsphinx.ts');
const { fixtureVocabulary, voiceDir } = await import('./test/voice-stt/home-vocab.ts');
const { readWavPcm, feed } = await import('./test/voice-stt/wav.ts');
const e = new PocketsphinxStt();
await e.setVocabulary(fixtureVocabulary());
const s = e.start();
feed(readWavPcm(voiceDir + '/lock the Front Door.wav'), (b) => s.write(b));
const r = await s.end();
await e.close();
process.stdout.write(r.text);
`;

async function logLines(level: string): Promise<{ text: string; lines: Array<Record<string, unknown>> }> {
  const env = { ...process.env, HOMEAGENT_LOG_LEVEL: level };
  delete env.NODE_ENV;
  const { stdout, stderr } = await exec(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], { cwd: root, env, maxBuffer: 16 << 20 });
  const lines = stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  return { text: stdout, lines };
}

test('at info, no log line holds what was heard; the decoded line keeps the verdict', async () => {
  const { text, lines } = await logLines('info');
  assert.equal(text, 'lock the front door');
  const decoded = lines.filter((l) => l.msg === 'stt: decoded');
  assert.equal(decoded.length, 1, JSON.stringify(lines));
  assert.equal(decoded[0]!.rejected, false);
  assert.equal(decoded[0]!.words, 4);
  for (const l of lines) assert.ok(!JSON.stringify(l).includes('front door'), `a line at info holds the speech: ${JSON.stringify(l)}`);
});

test('at debug, the stt: heard line holds the hypothesis', async () => {
  const { lines } = await logLines('debug');
  const heard = lines.filter((l) => l.msg === 'stt: heard');
  assert.equal(heard.length, 1);
  assert.match(String(heard[0]!.hypothesis), /lock the front door/);
});
