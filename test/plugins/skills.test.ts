/**
 * Skills (issue 17 "Skills"; Agent Skills format): the system prompt lists
 * each skill in one line (name: description), stable while the skills are;
 * skill_read returns the body or a file beside it; a path that leaves the
 * folder (.., absolute, a link) is refused; large files are cut.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseSkill, SKILL_READ_MAX_BYTES } from '../../src/plugins/external/skills.js';
import { INSTALL_ROOT } from '../../src/kernel/kernel.js';
import { pluginsDir, startRig, writePlugin } from './rig.js';

const skill = (name: string, description: string, body: string) => `---\nname: ${name}\ndescription: ${description}\n---\n${body}`;

async function read(rig: Awaited<ReturnType<typeof startRig>>, args: Record<string, unknown>) {
  const input = { id: 't', source: 'test', channel: 'console', text: '', kind: 'queued' as const, level: 0 as const, received_at: 0 };
  return rig.kernel.tools.execute('skill_read', args, { input, signal: new AbortController().signal, call_id: 'c' });
}

test('the prompt lists each skill in one line and skill_read returns its body or a file beside it', async () => {
  const outside = mkdtempSync(path.join(os.tmpdir(), 'homeagent-outside-'));
  writeFileSync(path.join(outside, 'secret.txt'), 'not for plugins');
  const rig = await startRig({
    setup: (d) => {
      const dir = writePlugin(pluginsDir(d), 'plant-care', { name: 'plant-care', version: '1.0.0', kind: 'skill', entry: 'SKILL.md' }, {
        'SKILL.md': skill('plant-care', 'Watering plans for house plants.', 'Ask which plants, then set timers.\n'),
        'reference/watering.md': 'Ferns: every 3 days.',
        'big.txt': 'x'.repeat(SKILL_READ_MAX_BYTES + 100),
      });
      symlinkSync(path.join(outside, 'secret.txt'), path.join(dir, 'link.txt'));
      writePlugin(pluginsDir(d), 'bins', { name: 'bins', version: '1.0.0', kind: 'skill', entry: 'SKILL.md' }, { 'SKILL.md': skill('bins', '"Which bin goes out tonight: rules: paper, glass"', 'Look at the calendar.\n') });
    },
  });
  try {
    await rig.kernel.injectInput('test', 'console', 'hello');
    const system = rig.provider.requests[0]!.messages[0]!.content ?? '';
    assert.match(system, /^Skills \(.*skill_read.*\):$/m);
    assert.match(system, /^- bins: Which bin goes out tonight: rules: paper, glass$/m);
    assert.match(system, /^- plant-care: Watering plans for house plants\.$/m);
    assert.ok(system.indexOf('- bins') < system.indexOf('- plant-care'), 'sorted: the prefix stays the same');
    assert.equal((await read(rig, { name: 'plant-care' })).content, 'Ask which plants, then set timers.\n');
    assert.equal((await read(rig, { name: 'plant-care', file: 'reference/watering.md' })).content, 'Ferns: every 3 days.');
    assert.match((await read(rig, {})).content, /bins: .*\nplant-care: /);
    for (const file of ['../bins/SKILL.md', '/etc/passwd', 'link.txt', 'reference/../../bins/SKILL.md']) {
      const r = await read(rig, { name: 'plant-care', file });
      assert.equal(r.is_error, true, file);
      assert.match(r.content, /not a path inside|leads out of/, file);
    }
    const big = await read(rig, { name: 'plant-care', file: 'big.txt' });
    assert.match(big.content, /\[cut: the file is larger than 65536 bytes\]$/);
    assert.match((await read(rig, { name: 'nope' })).content, /no skill "nope"; skills: bins, plant-care/);
    // Disabled: its line leaves the prompt on the next turn.
    await rig.external.setDisabled('bins', true);
    await rig.kernel.injectInput('test', 'console', 'hello again');
    assert.doesNotMatch(rig.provider.requests[1]!.messages[0]!.content ?? '', /- bins:/);
  } finally {
    await rig.close();
    rmSync(outside, { recursive: true, force: true });
  }
});

test('SKILL.md front matter: missing fields are named; block scalars and quotes are read; the shipped example skill parses', () => {
  assert.throws(() => parseSkill('no front matter', 'x/SKILL.md'), /x\/SKILL\.md: no front matter/);
  assert.throws(() => parseSkill('---\nname: a\n---\nbody', 'x/SKILL.md'), /missing field "description"/);
  assert.throws(() => parseSkill('---\nname: Not Valid\ndescription: d\n---\n', 'x/SKILL.md'), /\/name: "Not Valid"/);
  const folded = parseSkill("---\nname: fold\ndescription: >\n  one\n  two\nlicense: MIT\n---\nBody", 'f');
  assert.equal(folded.description, 'one two');
  assert.equal(folded.body, 'Body');
  assert.equal(parseSkill("---\nname: q\ndescription: 'it''s quoted'\n---\n", 'q').description, "it's quoted");
  const shipped = parseSkill(readFileSync(path.join(INSTALL_ROOT, 'plugins', 'household-routines', 'SKILL.md'), 'utf8'), 'shipped');
  assert.equal(shipped.name, 'household-routines');
});
