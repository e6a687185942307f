/**
 * The pocketsphinx recogniser's grammar files and work directory: one
 * generation of files per vocabulary (`g<N>/`: command.fsg, continuation.fsg
 * (the same sentences opening with an optional "and"/"then", for the utterance
 * after an early commit), compound.fsg, answer.fsg (yes/no, while a question
 * waits), command.jsgf, command.dict, garbage.fsg, garbage.dict), one fresh directory per decoder
 * pair (`u<N>-<pid>/`), and the leases that keep a replaced grammar's files
 * until the last session using them is done.
 *
 * The command grammar is the intent templates filled with the home's
 * vocabulary (src/intents buildGrammar, an epsilon-free `-fsg`); the
 * dictionary a subset of the CMU dictionary plus espeak-ng-generated
 * pronunciations (pronunciation.ts). The garbage grammar is a free loop of
 * the acoustic model's phones, the rejection measure of pocketsphinx.ts.
 */
import { answerFsg, answerWords } from '../../intents/answers.js';
import { appendFile, mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { tokenise } from '../../intents/index.js';
import { buildGrammarOffThread } from '../../intents/grammar-thread.js';
import { MODEL_PHONES, isPhoneWord, phoneDictionary, phoneWord, type FillerWeights } from '../../intents/filler.js';
import type { Vocabulary } from '../../intents/types.js';
import { createLogger } from '../../kernel/log.js';
import { DEBIAN_CMUDICT, lookupPronunciations, writeDictionary } from './pronunciation.js';
import { YES_RIVALS } from './pocketsphinx-judge.js';
import { NEAR_NAME_WORDS_EN, distinctiveNameWords, firstPronunciations, nameRivals } from './name-rivals.js';
import { SttNoGrammarError } from './errors.js';
import { dictionaryPhoneCounts } from './pocketsphinx-duration.js';

const log = createLogger('stt:pocketsphinx');


/** One built grammar: its directory and the vocabulary it was built from. */
export interface Grammar {
  readonly dir: string;
  readonly vocab: Vocabulary;
  /** Phones of each word of command.dict (its first pronunciation), for the length check (pocketsphinx-duration.ts). */
  readonly phones: ReadonlyMap<string, number>;
  /**
   * Rivals of the home's name words (name-rivals.ts nameRivals): aligned in
   * a heard name word's place before a command acts
   * (pocketsphinx-judge.ts oppositeSentences). Absent or empty: none.
   */
  readonly nameRivals?: Readonly<Record<string, readonly string[]>>;
}

/** What setVocabulary produced. */
export interface GrammarInfo {
  /** Directory with command.fsg, continuation.fsg, compound.fsg, answer.fsg (src/intents/answers.ts), command.jsgf, command.dict, garbage.fsg, garbage.dict. */
  dir: string;
  words: number;
  /** Words whose pronunciation was generated with espeak-ng. */
  generated: Record<string, string>;
}

/** A hold on a grammar's files: they stay until release() (called once). */
export interface GrammarLease {
  readonly grammar: Grammar;
  release(): void;
}

/** Options of GrammarFiles. */
export interface GrammarFilesOptions {
  /** Full pronouncing dictionary; default Debian's cmudict-en-us.dict. */
  dictionary?: string;
  /** espeak-ng binary for generated pronunciations. */
  espeakBinary?: string;
  /** Root of every file; default a fresh directory in os.tmpdir(), removed by close(). */
  workDir?: string;
  /** Prices of the filler path for unknown names (src/intents/filler.ts). */
  fillerWeights?: FillerWeights | null;
  /** The compound grammar's probability of a second command after a whole sentence (src/intents/fsg.ts DEFAULT_JOINT_PROB). */
  jointProb?: number;
  /** Probability of an opening that makes a sentence no command ("don't ...", src/intents/fsg.ts DEFAULT_NOT_COMMAND_PROB; 0: none). */
  notCommandProb?: number;
}

/** The words of the home's device names, aliases and rooms (lower case), which get accent alternates in the dictionary. */
function nameWords(vocab: Vocabulary): string[] {
  const names = [...vocab.entities.flatMap((e) => [e.name, ...(e.aliases ?? [])]), ...vocab.areas];
  return [...new Set(names.flatMap((n) => tokenise(n, 'en')))];
}

/** The garbage grammar: one state looping over every phone (as one-phone words), and its dictionary. */
function garbageGrammar(): { fsg: string; dict: string } {
  const p = (1 / (2 * MODEL_PHONES.length)).toPrecision(6);
  const lines = ['FSG_BEGIN garbage', 'NUM_STATES 2', 'START_STATE 0', 'FINAL_STATE 1'];
  for (const ph of MODEL_PHONES) lines.push(`TRANSITION 0 0 ${p} ${phoneWord(ph)}`, `TRANSITION 0 1 ${p} ${phoneWord(ph)}`);
  lines.push('FSG_END', '');
  return { fsg: lines.join('\n'), dict: phoneDictionary() };
}

/** The grammar generations, their leases, and the per-utterance directories. */
export class GrammarFiles {
  private root: string | undefined;
  private generation = 0;
  private sessions = 0;
  private grammar: Grammar | undefined;
  private pending: Promise<Grammar> | undefined;
  /** Number of setVocabulary calls so far (the newest wins). */
  private requested = 0;
  /** The builds in order: each request's turn starts when the one before it has built or was overtaken. */
  private queue: Promise<void> = Promise.resolve();
  /** The newest request's build (what an overtaken request answers with). */
  private newest: Promise<{ g: Grammar; info: GrammarInfo }> | undefined;
  /** Leases held on each grammar; a replaced grammar's files go when its last lease is released. */
  private readonly users = new Map<Grammar, number>();
  private readonly retired = new Set<Grammar>();
  private closed = false;
  /** Builds and removals still writing or deleting files: close() waits for them (a build must not write into a directory being removed). */
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly opts: GrammarFilesOptions = {}) {}

  private async ensureRoot(): Promise<string> {
    if (!this.root) this.root = this.opts.workDir ?? (await mkdtemp(path.join(os.tmpdir(), 'homeagent-ps-')));
    return this.root;
  }

  /**
   * Build the grammar and dictionary for `vocab`. Requests may come in a
   * burst (devices announced one by one): one build runs at a time, and a
   * request that a newer one overtook while it waited builds nothing and
   * resolves with the newer one's build. A build that finishes becomes the
   * grammar (it is newer than the one in use), and the newest request's build
   * follows it. A failed build keeps the grammar in use. Rejects with
   * GrammarError or PronunciationError, or SttNoGrammarError once closed.
   */
  async setVocabulary(vocab: Vocabulary): Promise<GrammarInfo> {
    const mine = ++this.requested;
    const build = async (): Promise<{ g: Grammar; info: GrammarInfo }> => {
      const root = await this.ensureRoot();
      const dir = path.join(root, `g${++this.generation}`);
      await mkdir(dir, { recursive: true });
      try {
        return await buildIn(dir);
      } catch (err) {
        // A failed build leaves no directory behind (a tester's failing names left one per attempt).
        await rm(dir, { recursive: true, force: true }).catch(() => undefined);
        throw err;
      }
    };
    const buildIn = async (dir: string): Promise<{ g: Grammar; info: GrammarInfo }> => {
      // On a worker thread: the build's CPU and garbage stay off the service's thread (grammar-thread.ts).
      const g = await buildGrammarOffThread(vocab, this.opts.fillerWeights, this.opts.jointProb, this.opts.notCommandProb);
      await writeFile(path.join(dir, 'command.fsg'), g.fsg);
      await writeFile(path.join(dir, 'continuation.fsg'), g.continuationFsg);
      await writeFile(path.join(dir, 'compound.fsg'), g.compoundFsg);
      await writeFile(path.join(dir, 'command.jsgf'), g.jsgf);
      await writeFile(path.join(dir, 'answer.fsg'), answerFsg());
      const garbage = garbageGrammar();
      await writeFile(path.join(dir, 'garbage.fsg'), garbage.fsg);
      await writeFile(path.join(dir, 'garbage.dict'), garbage.dict);
      // The filler's one-phone words (src/intents/filler.ts) are spelt by their phone, not looked up.
      const words = [...new Set([...g.words.filter((w) => !isPhoneWord(w)), ...answerWords()])].sort();
      // Near names' words (name-rivals.ts) are in the dictionary for the alignments only, never in a grammar; only
      // those the pronouncing dictionary has (none is generated).
      const inGrammar = new Set(words);
      const known = await lookupPronunciations([...NEAR_NAME_WORDS_EN, ...YES_RIVALS], this.opts.dictionary ?? DEBIAN_CMUDICT);
      const rivalWords = NEAR_NAME_WORDS_EN.filter((w) => known.has(w));
      // A heard yes is aligned against YES_RIVALS (pocketsphinx-judge.ts); a rival missing from the dictionary is
      // generated rather than left out (the alignment would fail, and every yes be refused).
      const report = await writeDictionary([...words, ...rivalWords, ...YES_RIVALS], path.join(dir, 'command.dict'), {
        dictionary: this.opts.dictionary ?? DEBIAN_CMUDICT,
        espeakBinary: this.opts.espeakBinary,
        accentWords: nameWords(vocab),
      });
      // The phone words: the filler's, and the answer grammar's loop of anything else.
      await appendFile(path.join(dir, 'command.dict'), phoneDictionary());
      if (Object.keys(report.generated).length > 0) log.info({ generated: report.generated }, 'generated pronunciations');
      const dictText = await readFile(path.join(dir, 'command.dict'), 'utf8');
      const phones = dictionaryPhoneCounts(dictText);
      const names = [...vocab.entities.flatMap((e) => [e.name, ...(e.aliases ?? [])]), ...vocab.areas].map((n) => tokenise(n, 'en'));
      const rivals = nameRivals(distinctiveNameWords(names).filter((w) => inGrammar.has(w)), firstPronunciations(dictText), rivalWords);
      return { g: { dir, vocab, phones, nameRivals: rivals }, info: { dir, words: g.words.length, generated: report.generated } };
    };
    // One build at a time, the newest request only: a home announced device by device asks for a grammar per
    // device, and each build is a worker thread of ~100 MB and ~0.9 s of CPU (fourteen at once on a Pi would not fit).
    // A request overtaken while it waited builds nothing and answers with the newest one's build.
    let own = false;
    const turn = this.queue.then(async (): Promise<{ g: Grammar; info: GrammarInfo } | 'overtaken'> => {
      if (this.closed) throw new SttNoGrammarError();
      if (mine !== this.requested) return 'overtaken';
      own = true;
      return this.tracked(build());
    });
    this.queue = turn.then(
      () => undefined,
      () => undefined,
    );
    const p: Promise<{ g: Grammar; info: GrammarInfo }> = turn.then((t) => (t === 'overtaken' ? this.newest! : t));
    this.newest = p;
    const pending = p.then((r) => r.g);
    this.pending = pending;
    pending.catch(() => undefined);
    let built: { g: Grammar; info: GrammarInfo };
    try {
      built = await p;
    } catch (err) {
      // The grammar in use stays: sessions started from now on get it, not this failure.
      if (this.pending === pending) this.pending = undefined;
      throw err;
    }
    const { g, info } = built;
    // Overtaken: the newest request's build, which that request makes the grammar.
    if (!own) return info;
    if (this.closed) {
      this.retire(g);
      return info;
    }
    // Builds run one at a time, so this one is newer than the grammar in use: it becomes the grammar even when a newer
    // vocabulary was asked for meanwhile (that one follows). Thrown away instead, its files went while a session that
    // had waited for it was about to take its lease, and every command said during a burst of announcements failed
    // ("Failed to open dictionary file .../garbage.dict", a breaking tester's).
    const old = this.grammar;
    this.grammar = g;
    if (this.pending === pending) this.pending = undefined;
    if (old) this.retire(old);
    return info;
  }

  /** The grammar a session starting now uses: the build in progress, else the current one. Rejects with SttNoGrammarError. */
  current(): Promise<Grammar> {
    if (this.pending) return this.pending;
    if (!this.grammar) return Promise.reject(new SttNoGrammarError());
    return Promise.resolve(this.grammar);
  }

  /** Hold `g`'s files until the lease is released; undefined once closed. */
  lease(g: Grammar): GrammarLease | undefined {
    if (this.closed) return undefined;
    this.users.set(g, (this.users.get(g) ?? 0) + 1);
    let released = false;
    return {
      grammar: g,
      release: () => {
        if (released) return;
        released = true;
        const n = (this.users.get(g) ?? 1) - 1;
        if (n > 0) {
          this.users.set(g, n);
          return;
        }
        this.users.delete(g);
        if (this.retired.delete(g)) void this.tracked(rm(g.dir, { recursive: true, force: true, maxRetries: 3 })).catch(() => undefined);
      },
    };
  }

  /** A fresh directory for one decoder pair. */
  async utteranceDir(): Promise<string> {
    const root = await this.ensureRoot();
    const dir = path.join(root, `u${++this.sessions}-${process.pid}`);
    await mkdir(dir, { recursive: true });
    return dir;
  }

  /** Forget the grammar and remove the work directory when it was created here; current() rejects with STT_NO_GRAMMAR afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    this.pending = undefined;
    // A build still writing (and the removal of what it built) ends before the files go.
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    if (this.root && !this.opts.workDir) await rm(this.root, { recursive: true, force: true, maxRetries: 3 });
    this.root = undefined;
    this.grammar = undefined;
  }

  /** Remove a replaced grammar's directory now, or when its last lease is released. */
  private retire(g: Grammar): void {
    if ((this.users.get(g) ?? 0) > 0) this.retired.add(g);
    else void this.tracked(rm(g.dir, { recursive: true, force: true, maxRetries: 3 })).catch(() => undefined);
  }

  /** `p`, kept in inFlight until it settles. */
  private tracked<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    const done = (): void => void this.inFlight.delete(p);
    p.then(done, done);
    return p;
  }
}
