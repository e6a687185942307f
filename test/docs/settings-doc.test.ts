/**
 * docs/SETTINGS.md is generated from the registered setting definitions;
 * this keeps it true (run `node --import tsx scripts/settings-doc.ts` after
 * adding or changing a setting).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { settingsMarkdown } from '../../scripts/settings-doc.js';

test('docs/SETTINGS.md lists every registered setting as defined', () => {
  const md = readFileSync(path.resolve('docs/SETTINGS.md'), 'utf8');
  assert.equal(md, settingsMarkdown(), 'regenerate with: node --import tsx scripts/settings-doc.ts');
  assert.match(md, /core\.agent\.max_tool_rounds/);
  assert.match(md, /plugin\.mqtt\.url/);
});
