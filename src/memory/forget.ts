/**
 * Forgetting for real (issue 18): the words that say what to forget, the
 * test whether a stored text is about it, the rare words a forgotten text
 * leaves nowhere else, and the SQLite steps that make deleted bytes go away
 * (`secure_delete` zeroes deleted content, VACUUM rewrites pages written
 * before it was on, a TRUNCATE checkpoint empties the WAL).
 *
 * What forgetting removes from the memory store is MemorySystem.forget
 * (src/memory/memory-system.ts); the run log's tombstones are
 * SqliteRunLog.forget (src/kernel/run-log.ts); pre-update copies of the
 * stores are scrubbed with {@link scrubSqliteFile} (src/service/forgetting.ts).
 */
import Database from 'better-sqlite3';
import { HAN } from '../kernel/language.js';
import { jieba } from './jieba.js';

/**
 * Words never used to pick what to forget or to find it elsewhere: function
 * words and the words people use to ask ("forget that I told you ...").
 */
const FORGET_STOP = new Set(
  (
    'a an the and or but if then of at by for with about into to from up in out on off over under again here there when where why how all any both each ' +
    'no nor not only so than too very can will just should now i me my mine myself we our you your yours he him his she her it its they them their ' +
    'what which who whom this that these those am is are was were be been being have has had do does did would could i\'m it\'s don\'t didn\'t ' +
    'forget forgot forgotten remember remembered told tell said say know knew please thanks thank okay yes also like really just ever before ' +
    'memory memories anything everything something about that\'s there\'s'
  ).split(/\s+/),
);

/** Han words said when asking to forget ("忘记我说过的..."). */
const ZH_FORGET = /忘记|忘掉|忘了|别记|不要记|删除|我说过|我告诉你|我的|的|了|吧|请/gu;

/** Chinese words said when asking, never what is forgotten. */
const ZH_ASKING = new Set(['忘记', '忘掉', '别记', '不要', '删除', '说过', '告诉', '我们', '你们', '什么', '一下', '那个', '这个', '记住', '记得']);

/** The words (two characters or more) of a Chinese run, by jieba, without asking words. */
function hanWords(run: string): string[] {
  return jieba()
    .cut(run)
    .filter((w) => [...w].length >= 2 && /^\p{Script=Han}+$/u.test(w) && !ZH_ASKING.has(w));
}

/** A word: letters and digits (an apostrophe or hyphen inside), or a run of Chinese characters. */
const WORD = new RegExp(`${HAN}+|[\\p{L}\\p{N}](?:[\\p{L}\\p{N}'’-]*[\\p{L}\\p{N}])?`, 'gu');

/** The words of `text`, lower-cased (NFKC), in order, without duplicates. */
export function wordsOf(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.normalize('NFKC').toLowerCase().replace(/’/g, "'").matchAll(WORD)) out.add(m[0]);
  return [...out];
}

/**
 * The words that say what to forget: the content words of `about` ("my bike
 * lock code" -> bike, lock, code). Empty when it names nothing.
 */
export function forgetWords(about: string): string[] {
  const out: string[] = [];
  for (const w of wordsOf(about)) {
    if (/^\p{Script=Han}/u.test(w)) {
      // Each word of the run must be there (the sentence need not be said the same way).
      const rest = w.replace(ZH_FORGET, ' ');
      const ws = hanWords(rest);
      if (ws.length > 0) out.push(...ws);
      else for (const part of rest.split(' ')) if ([...part].length >= 2) out.push(part);
    } else if (!FORGET_STOP.has(w) && w.length >= 2) out.push(w);
  }
  return out;
}

/** `s` as a literal inside a regular expression. */
function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A test for `word` as a whole word (Chinese: as a substring), case-insensitive. */
export function wordTest(word: string): RegExp {
  return /^\p{Script=Han}/u.test(word) ? new RegExp(escapeRe(word), 'u') : new RegExp(`(?:^|[^\\p{L}\\p{N}])${escapeRe(word)}(?:$|[^\\p{L}\\p{N}])`, 'iu');
}

/** Whether `text` holds every one of `words` (whole words; Chinese as substrings). */
export function mentionsAll(text: string, words: readonly string[]): boolean {
  if (words.length === 0) return false;
  const t = text.normalize('NFKC').replace(/’/g, "'");
  return words.every((w) => wordTest(w).test(t));
}

/** Whether `text` holds any of `words`. */
export function mentionsAny(text: string, words: readonly string[]): boolean {
  const t = text.normalize('NFKC').replace(/’/g, "'");
  return words.some((w) => wordTest(w).test(t));
}

/**
 * Candidate rare words of forgotten texts: content words (not function or
 * asking words) of at least three letters (a Chinese run of two). Whether
 * they are rare — found nowhere that remains — the caller decides.
 */
export function candidateRareWords(texts: Iterable<string>): string[] {
  const out = new Set<string>();
  for (const t of texts) {
    for (const w of wordsOf(t)) {
      if (/^\p{Script=Han}/u.test(w)) {
        if ([...w].length >= 2 && !ZH_ASKING.has(w)) out.add(w);
        for (const x of hanWords(w)) out.add(x);
      } else if (w.length >= 3 && !FORGET_STOP.has(w) && !/^\d{1,3}$/.test(w)) out.add(w);
    }
  }
  return [...out];
}

/**
 * After a forgetting transaction committed: rewrite every page (VACUUM: free
 * space left by deletes made before `secure_delete` was on is gone, the
 * free list dropped) and checkpoint the WAL with TRUNCATE (the WAL file is
 * emptied, so no old frame holds the text); `vacuum` false: the checkpoint
 * only. Retries the checkpoint while
 * another connection holds a read snapshot (up to ~2 s). Returns whether the
 * WAL was emptied.
 */
export function eraseFreedPages(db: Database.Database, vacuum = true): boolean {
  db.pragma('secure_delete = ON');
  if (vacuum) db.exec('VACUUM');
  for (let i = 0; i < 40; i++) {
    const r = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number; log: number; checkpointed: number }>;
    if (!r[0] || r[0].busy === 0) return true;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  }
  return false;
}

/** A table's name quoted for SQL. */
function q(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * Delete, in every table of `db` but those in `skip`, the rows holding one
 * of `words` in a text column (case-insensitive substring; FTS5 tables by
 * MATCH, then merged with 'optimize' so their shadow tables keep no old
 * segment; shadow tables themselves are left to their FTS5 table). The
 * safety net of forgetting: a table added later (embeddings, summaries)
 * loses what names the forgotten words even when nobody taught forgetting
 * about it. Call inside a transaction. Returns the rows deleted.
 */
export function sweepTables(db: Database.Database, words: readonly string[], skip: ReadonlySet<string> = new Set()): number {
  if (words.length === 0) return 0;
  let removed = 0;
  const tables = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'").all() as Array<{ name: string; sql: string | null }>;
  const fts = tables.filter((t) => /create\s+virtual\s+table.*using\s+fts5/is.test(t.sql ?? '')).map((t) => t.name);
  const shadow = (name: string): boolean => fts.some((f) => name.startsWith(`${f}_`));
  for (const t of tables) {
    if (skip.has(t.name) || shadow(t.name)) continue;
    if (fts.includes(t.name)) {
      for (const w of words) {
        removed += db.prepare(`DELETE FROM ${q(t.name)} WHERE rowid IN (SELECT rowid FROM ${q(t.name)} WHERE ${q(t.name)} MATCH ?)`).run(`"${w.replace(/"/g, '""')}"`).changes;
      }
      db.prepare(`INSERT INTO ${q(t.name)}(${q(t.name)}) VALUES('optimize')`).run();
      continue;
    }
    if (/create\s+virtual/i.test(t.sql ?? '')) continue;
    const cols = (db.prepare(`PRAGMA table_info(${q(t.name)})`).all() as Array<{ name: string; type: string }>).filter((c) => !/INT|REAL|FLOA|DOUB/i.test(c.type));
    for (const c of cols) {
      for (const w of words) removed += db.prepare(`DELETE FROM ${q(t.name)} WHERE instr(lower(CAST(${q(c.name)} AS TEXT)), ?) > 0`).run(w.toLowerCase()).changes;
    }
  }
  return removed;
}

/**
 * Delete, in every ordinary table of `db` but those in `skip`, the rows
 * that point at something forgotten: a `doc_id` column holding one of
 * `docIds`, an `event_id` column one of `eventIds` (an embedding stored for
 * a document holds no word, but is still the document). Call inside a
 * transaction. Returns the rows deleted.
 */
export function sweepReferences(db: Database.Database, docIds: ReadonlySet<number>, eventIds: ReadonlySet<string>, skip: ReadonlySet<string> = new Set()): number {
  let removed = 0;
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND sql NOT LIKE 'CREATE VIRTUAL%'").pluck().all() as string[];
  for (const t of tables) {
    if (skip.has(t)) continue;
    const cols = new Set((db.prepare(`PRAGMA table_info(${q(t)})`).all() as Array<{ name: string }>).map((c) => c.name));
    if (cols.has('doc_id') && docIds.size > 0) removed += db.prepare(`DELETE FROM ${q(t)} WHERE doc_id IN (SELECT value FROM json_each(?))`).run(JSON.stringify([...docIds])).changes;
    if (cols.has('event_id') && eventIds.size > 0) removed += db.prepare(`DELETE FROM ${q(t)} WHERE event_id IN (SELECT value FROM json_each(?))`).run(JSON.stringify([...eventIds])).changes;
  }
  return removed;
}

/**
 * Remove `words` from a SQLite file that is not in use (a pre-update copy
 * of a store, any schema version): {@link sweepTables} over every table, in
 * one transaction, then VACUUM with `secure_delete` on and the WAL (if any)
 * truncated. Returns the rows removed. Throws the better-sqlite3 error when
 * the file is not a database.
 */
export function scrubSqliteFile(file: string, words: readonly string[]): number {
  const db = new Database(file, { fileMustExist: true });
  try {
    db.pragma('secure_delete = ON');
    const removed = db.transaction(() => sweepTables(db, words))();
    db.exec('VACUUM');
    db.pragma('wal_checkpoint(TRUNCATE)');
    return removed;
  } finally {
    db.close();
  }
}
