/**
 * Skills (issue 17 "Skills"; the Agent Skills format, agentskills.io): a
 * folder with a `SKILL.md` whose YAML front matter has `name` and
 * `description`, and whose body is instructions for the model; files beside
 * it (references, templates) can be read too.
 *
 *   ---
 *   name: shopping-run
 *   description: Plan a shopping run from the shopping list, grouped by shop.
 *   ---
 *   1. Read the shopping list with the list tool ...
 *
 * Each running skill plugin adds itself to the SkillCatalog. The built-in
 * `skills` plugin puts one line per skill (name: description) into the
 * system message (src/kernel/prompt-sections.ts; it counts toward the
 * prompt budget of issue 19, so descriptions are cut at
 * SKILL_LINE_DESCRIPTION_CHARS and at most SKILL_LINES_MAX skills are named)
 * and serves the tool `skill_read {name, file?}`: the body of SKILL.md, or a
 * file beside it. A path that leaves the skill's folder (`..`, an absolute
 * path, a symbolic link pointing out) is refused; a file larger than
 * SKILL_READ_MAX_BYTES is cut there with a note.
 */
import { closeSync, openSync, readFileSync, readSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Plugin, PluginSDK } from '../../kernel/sdk.js';
import type { PromptSections } from '../../kernel/prompt-sections.js';
import { HomeAgentError } from '../../kernel/errors.js';
import { defineTool } from '../../kernel/tool-schema.js';
import type { PluginManifest } from './manifest.js';

/** Characters of a skill's description the prompt line keeps. */
export const SKILL_LINE_DESCRIPTION_CHARS = 200;
/** Skills the prompt names at most (the rest: skill_read without a name lists them). */
export const SKILL_LINES_MAX = 30;
/** Bytes skill_read returns at most. */
export const SKILL_READ_MAX_BYTES = 64 * 1024;

/** A skill's front matter and body. */
export interface SkillDoc {
  name: string;
  description: string;
  body: string;
}

/**
 * Parse SKILL.md text: `---` front matter of `key: value` lines (values may
 * be quoted, or a `>`/`|` block of indented lines), then the body. Throws
 * HomeAgentError SKILL_FORMAT naming what is missing (`file` names it).
 */
export function parseSkill(text: string, file: string): SkillDoc {
  const m = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text);
  if (!m) throw new HomeAgentError('SKILL_FORMAT', `${file}: no front matter (the file must start with a --- line, name: and description:, and a --- line)`);
  const fields: Record<string, string> = {};
  const lines = m[1]!.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const kv = /^([A-Za-z][\w-]*):[ \t]*(.*)$/.exec(lines[i]!);
    if (!kv) continue;
    let value = kv[2]!.trim();
    if (value === '>' || value === '|' || value === '>-' || value === '|-') {
      const block: string[] = [];
      while (i + 1 < lines.length && /^([ \t]+|$)/.test(lines[i + 1]!) && !/^[A-Za-z][\w-]*:/.test(lines[i + 1]!)) block.push(lines[++i]!.trim());
      value = block.join(value.startsWith('>') ? ' ' : '\n').trim();
    } else if ((value.startsWith('"') && value.endsWith('"') && value.length >= 2) || (value.startsWith("'") && value.endsWith("'") && value.length >= 2)) {
      value = value.startsWith('"') ? (JSON.parse(value) as string) : value.slice(1, -1).replace(/''/g, "'");
    }
    fields[kv[1]!] = value;
  }
  for (const key of ['name', 'description']) {
    if (!fields[key]) throw new HomeAgentError('SKILL_FORMAT', `${file}: front matter: missing field "${key}"`);
  }
  if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(fields.name!)) throw new HomeAgentError('SKILL_FORMAT', `${file}: front matter /name: "${fields.name}" must be lower-case letters, digits and hyphens (at most 64)`);
  return { name: fields.name!, description: fields.description!.replace(/\s+/g, ' '), body: text.slice(m[0].length).replace(/^\s*\n/, '') };
}

/** One skill in the catalog. */
export interface SkillEntry {
  name: string;
  description: string;
  /** The skill's folder (absolute). */
  dir: string;
  /** SKILL.md's file name in `dir`. */
  file: string;
}

/** The running skills, by name. */
export class SkillCatalog {
  private readonly skills = new Map<string, SkillEntry>();

  add(s: SkillEntry): void {
    this.skills.set(s.name, s);
  }

  remove(name: string): void {
    this.skills.delete(name);
  }

  /** The skills, sorted by name. */
  list(): SkillEntry[] {
    return [...this.skills.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  get(name: string): SkillEntry | undefined {
    return this.skills.get(name);
  }

  /** The system-message section: '' with no skills, else a head line and one `name: description` line per skill. */
  promptText(): string {
    const all = this.list();
    if (all.length === 0) return '';
    const shown = all.slice(0, SKILL_LINES_MAX);
    const lines = shown.map((s) => `- ${s.name}: ${cut(s.description, SKILL_LINE_DESCRIPTION_CHARS)}`);
    if (all.length > shown.length) lines.push(`- (${all.length - shown.length} more: skill_read without a name lists them)`);
    return ['Skills (before doing one, read it: tools_call skill_read {"name":...}):', ...lines].join('\n');
  }

  /**
   * skill_read: the body of `name`'s SKILL.md, or the file `file` beside it
   * (a path relative to the skill's folder). Without `name`: the list.
   * Throws HomeAgentError SKILL_UNKNOWN, SKILL_PATH (escapes the folder, not
   * a file) or SKILL_READ (cannot read).
   */
  read(name: string | undefined, file?: string): string {
    if (!name) return this.list().map((s) => `${s.name}: ${s.description}`).join('\n') || 'no skills are installed';
    const s = this.skills.get(name);
    if (!s) throw new HomeAgentError('SKILL_UNKNOWN', `no skill "${name}"; skills: ${this.list().map((x) => x.name).join(', ') || 'none'}`);
    if (file === undefined || file === '' || file === s.file) {
      const text = readCapped(path.join(s.dir, s.file));
      return parseSkill(text, s.file).body;
    }
    return readCapped(insideFolder(s.dir, file, name));
  }
}

/** The absolute, real path of `rel` inside `dir`; SKILL_PATH when it leaves the folder (also through a link) or is not a file. */
export function insideFolder(dir: string, rel: string, skill: string): string {
  if (path.isAbsolute(rel) || rel.split(/[\\/]/).includes('..')) throw new HomeAgentError('SKILL_PATH', `"${rel}" is not a path inside the skill ${skill}'s folder`);
  let real: string;
  let root: string;
  try {
    root = realpathSync(dir);
    real = realpathSync(path.join(dir, rel));
  } catch {
    throw new HomeAgentError('SKILL_PATH', `the skill ${skill} has no file "${rel}"`);
  }
  if (real !== root && !real.startsWith(root + path.sep)) throw new HomeAgentError('SKILL_PATH', `"${rel}" leads out of the skill ${skill}'s folder`);
  if (!statSync(real).isFile()) throw new HomeAgentError('SKILL_PATH', `"${rel}" in the skill ${skill} is not a file`);
  return real;
}

/** A file's text, at most SKILL_READ_MAX_BYTES (then a note says it was cut). */
function readCapped(file: string): string {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    throw new HomeAgentError('SKILL_READ', `cannot read ${path.basename(file)}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  try {
    const buf = Buffer.alloc(SKILL_READ_MAX_BYTES + 1);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const text = buf.subarray(0, Math.min(n, SKILL_READ_MAX_BYTES)).toString('utf8');
    return n > SKILL_READ_MAX_BYTES ? `${text}\n[cut: the file is larger than ${SKILL_READ_MAX_BYTES} bytes]` : text;
  } finally {
    closeSync(fd);
  }
}

function cut(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}

/** Options of a skill plugin. */
export interface SkillPluginOptions {
  manifest: PluginManifest;
  dir: string;
  catalog: SkillCatalog;
}

/** A skill as a plugin: started = listed in the prompt and readable. */
export class SkillPlugin implements Plugin {
  readonly name: string;
  readonly external = true;
  constructor(readonly opts: SkillPluginOptions) {
    this.name = opts.manifest.name;
  }

  /** SKILL.md's file name. */
  get file(): string {
    const e = this.opts.manifest.entry;
    return typeof e === 'string' ? e : 'SKILL.md';
  }

  /** Parse SKILL.md; its front matter's name must be the plugin's. Throws SKILL_FORMAT. */
  read(): SkillDoc {
    let text: string;
    try {
      text = readFileSync(path.join(this.opts.dir, this.file), 'utf8');
    } catch (err) {
      throw new HomeAgentError('SKILL_FORMAT', `plugin ${this.name}: cannot read ${this.file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
    const doc = parseSkill(text, `plugins/${this.name}/${this.file}`);
    if (doc.name !== this.name) throw new HomeAgentError('SKILL_FORMAT', `plugins/${this.name}/${this.file}: front matter /name: "${doc.name}" differs from the plugin's name "${this.name}"`);
    return doc;
  }

  start(_sdk: PluginSDK): void {
    const doc = this.read();
    this.opts.catalog.add({ name: this.name, description: doc.description, dir: this.opts.dir, file: this.file });
  }

  stop(): void {
    this.opts.catalog.remove(this.name);
  }
}

/** Options of the built-in skills plugin. */
export interface SkillsPluginOptions {
  catalog: SkillCatalog;
  /** The kernel's system-message sections. */
  sections: () => PromptSections;
}

/** The built-in plugin that lists the skills in the prompt and serves skill_read. */
export class SkillsPlugin implements Plugin {
  readonly name = 'skills';
  constructor(private readonly opts: SkillsPluginOptions) {}

  start(sdk: PluginSDK): void {
    const catalog = this.opts.catalog;
    this.opts.sections().set(this.name, 'skills', () => catalog.promptText());
    sdk.registerTool({
      ...defineTool({
        name: 'skill_read',
        description: 'Read a skill\'s instructions (its SKILL.md body), or a file beside it. Without name: the list of skills. Example: {"name":"shopping-run"}',
        parameters: {
          type: 'object',
          properties: { name: { type: 'string' }, file: { type: 'string', description: 'a file in the skill\'s folder, e.g. reference.md' } },
          additionalProperties: false,
        },
        handler: (args) => catalog.read(args.name, args.file),
      }),
      group: 'skills',
    });
  }

  stop(): void {
    this.opts.sections().removeOwner(this.name);
  }
}
