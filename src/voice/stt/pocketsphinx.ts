/**
 * Local command recognition with the real pocketsphinx of Debian 12:
 * packages pocketsphinx + pocketsphinx-en-us, version 0.8+5prealpha, model in
 * /usr/share/pocketsphinx/model/en-us. The grammar is the intent templates
 * filled with the home's vocabulary (src/intents buildGrammar, loaded as an
 * epsilon-free `-fsg`), the dictionary a subset of the CMU dictionary plus
 * espeak-ng-generated pronunciations (pronunciation.ts).
 *
 * Decoding is one pass over the whole utterance with `pocketsphinx_batch`:
 * batch cepstral mean normalisation (the mean of this utterance, not the
 * live estimate that starts from a fixed `-cmninit` and is still wrong
 * during a 2 s command) and wide beams; with live CMN and the default beams
 * most real recordings either found no path to the grammar's final state or
 * came out as another sentence. The decoders start when the utterance
 * starts, load the model and grammar while the person speaks, and wait on a
 * named pipe for the utterance (their `-ctl` file). At the first pause in
 * speech (SttSession.pause(), plugin.voice.pause_ms) the audio so far is
 * cleaned (audio-prep.ts), written once and handed over: the search runs
 * while the endpointer still waits for the rest of its silence, and end()
 * takes that result when no speech came in between (PocketsphinxSession).
 *
 * A grammar accepts anything as its nearest sentence, so a second measure
 * decides rejection: a garbage decoder runs on the same audio, a free loop
 * of the model's phones (context-dependent, the same acoustic model and
 * front end as the grammar). When the grammar path's acoustic score per
 * frame trails the free loop's by more than a threshold, the speech is out
 * of grammar. No path to the final state, or a transcript no template
 * matches, is a rejection too.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, mkdir, open, readFile, rm, writeFile, type FileHandle } from 'node:fs/promises';
import { constants as fsConstants } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { buildGrammar, matchIntent, normaliseText } from '../../intents/index.js';
import type { Vocabulary } from '../../intents/types.js';
import { createLogger } from '../../kernel/log.js';
import type { SttEngine, SttResult, SttSession } from './types.js';
import { DEBIAN_CMUDICT, DEBIAN_MODEL_DIR, writeDictionary } from './pronunciation.js';
import { hypsegText, parseHypsegLine, type HypsegUtterance } from './pocketsphinx-log.js';
import { prepareUtterance } from './audio-prep.js';
import { SttAbortedError, SttFailedError, SttNoGrammarError, SttUnavailableError } from './errors.js';

const execFileP = promisify(execFile);
const log = createLogger('stt:pocketsphinx');

/**
 * Front-end settings shared by both decoders (so their frames line up).
 * `-remove_noise yes` (pocketsphinx's default spectral-subtraction noise
 * removal; it was off while clicks at the start of an utterance threw its
 * noise estimate off, which audio-prep.ts now removes): on the fixture
 * recordings 16 of 18 commands right instead of 15, on the 60 held-out
 * utterances (test/voice-stt/held-out.test.ts) and a 100-utterance variant
 * of them the same as without. `-cmn batch`: the cepstral mean of the
 * utterance itself.
 */
export const DEFAULT_FRONTEND_ARGS: readonly string[] = ['-remove_noise', 'yes', '-cmn', 'batch'];

/**
 * Search settings of the grammar decoder: a language weight of 2 (every
 * sentence of the grammar is equally likely, see intents/fsg.ts, so the
 * weight decides no final choice; a low one keeps sentences with a rare
 * first word from being pruned early), wide beams (the defaults prune the right path of
 * real, imperfect speech and leave no path to the final state) and a cap of
 * 3000 active HMMs per frame (`-maxhmmpf`, default 30000): the wide beams
 * keep too many paths alive in the first frames of a large grammar; the cap
 * keeps the best ones and takes a third off the decode time with the same
 * results on the fixture and held-out recordings. Measured with
 * test/bench/voice-stt.ts.
 */
export const DEFAULT_DECODER_ARGS: readonly string[] = ['-lw', '2', '-beam', '1e-80', '-pbeam', '1e-80', '-wbeam', '1e-60', '-maxhmmpf', '3000'];

/** Search settings of the garbage (free phone loop) decoder. */
export const DEFAULT_GARBAGE_ARGS: readonly string[] = ['-lw', '2', '-beam', '1e-80', '-pbeam', '1e-80', '-wbeam', '1e-60'];

/** The phones of the en-us acoustic model (CMU set), the words of the garbage loop. */
const MODEL_PHONES = 'AA AE AH AO AW AY B CH D DH EH ER EY F G HH IH IY JH K L M N NG OW OY P R S SH T TH UH UW V W Y Z ZH'.split(' ');

/** Options of PocketsphinxStt. */
export interface PocketsphinxOptions {
  /** Decoder binary; default 'pocketsphinx_batch' on PATH. */
  binary?: string;
  /** Model directory holding en-us/ (acoustic model); default Debian's. */
  modelDir?: string;
  /** Full pronouncing dictionary; default Debian's cmudict-en-us.dict. */
  dictionary?: string;
  /** Where grammar, dictionary and per-utterance files go; default a fresh directory in os.tmpdir(), removed by close(). */
  workDir?: string;
  /** Front-end settings for both decoders (see DEFAULT_FRONTEND_ARGS). */
  frontendArgs?: readonly string[];
  /** Search settings of the grammar decoder (see DEFAULT_DECODER_ARGS). */
  decoderArgs?: readonly string[];
  /** Clean the audio before decoding (DC removal, leading burst, see audio-prep.ts); default true. */
  prepareAudio?: boolean;
  /** Out-of-grammar rejection by the garbage-loop comparison. */
  rejection?: {
    /** Default true. */
    enabled?: boolean;
    /** Reject when (garbage ascr - grammar ascr) / frames exceeds this; default DEFAULT_MAX_SCORE_GAP. */
    maxScoreGap?: number;
    /** Garbage decoder settings (see DEFAULT_GARBAGE_ARGS). */
    garbageArgs?: readonly string[];
  };
  /** espeak-ng binary for generated pronunciations. */
  espeakBinary?: string;
  /** Kill a decoder that has not finished this long after end(); default 30000 ms. */
  finishTimeoutMs?: number;
}

/**
 * Default rejection threshold: acoustic score units per 10 ms frame by which
 * the grammar path may trail the free phone loop. Calibrated on the fixture
 * recordings as the voice pipeline decodes them (from the pre-roll to 400 ms,
 * plugin.voice.pause_ms, after the last word; test/bench/voice-stt.ts prints
 * the measure): commands -5..13, out-of-grammar speech forced through the
 * grammar 21 and 23; the threshold sits between the two groups. The measure
 * is a mean over all frames, so it depends on how much silence follows the
 * speech: with only 200 ms, a short word ("pause") reaches 18.
 */
export const DEFAULT_MAX_SCORE_GAP = 17.5;

/** Utterances shorter than this (ms of audio) are not decoded: rejected at once. */
const MIN_UTTERANCE_MS = 150;

/** What setVocabulary produced. */
export interface GrammarInfo {
  /** Directory with command.fsg, command.jsgf, command.dict, garbage.fsg, garbage.dict. */
  dir: string;
  words: number;
  /** Words whose pronunciation was generated with espeak-ng. */
  generated: Record<string, string>;
}

/** Details of a decode, for tuning and benchmarks. */
export interface PocketsphinxDetails {
  hypothesis: string;
  grammarMismatch: boolean;
  /** (garbage ascr - grammar ascr) / frames; undefined without rejection decoder. */
  scoreGap?: number;
  /** Unused since the garbage loop replaced the phone-loop coverage measure; kept for callers that print it. */
  coverage?: number;
  frames: number;
  /** ms of audio dropped from the start by the audio clean-up. */
  droppedMs?: number;
}

interface Grammar {
  dir: string;
  vocab: Vocabulary;
}

/** The garbage grammar: one state looping over every phone (as one-phone words), and its dictionary. */
function garbageGrammar(): { fsg: string; dict: string } {
  const p = (1 / (2 * MODEL_PHONES.length)).toPrecision(6);
  const lines = ['FSG_BEGIN garbage', 'NUM_STATES 2', 'START_STATE 0', 'FINAL_STATE 1'];
  for (const ph of MODEL_PHONES) lines.push(`TRANSITION 0 0 ${p} ph_${ph.toLowerCase()}`, `TRANSITION 0 1 ${p} ph_${ph.toLowerCase()}`);
  lines.push('FSG_END', '');
  return { fsg: lines.join('\n'), dict: MODEL_PHONES.map((ph) => `ph_${ph.toLowerCase()} ${ph}\n`).join('') };
}

/** The pocketsphinx command recogniser (SttEngine 'pocketsphinx'). */
export class PocketsphinxStt implements SttEngine {
  readonly name = 'pocketsphinx';
  private readonly opts: PocketsphinxOptions;
  private grammar: Grammar | undefined;
  private pending: Promise<Grammar> | undefined;
  private root: string | undefined;
  private generation = 0;
  private sessions = 0;
  private readonly live = new Set<ChildProcess>();
  /** Details of the last finished utterance. */
  lastDetails: PocketsphinxDetails | undefined;

  constructor(opts: PocketsphinxOptions = {}) {
    this.opts = opts;
  }

  /** @internal Decoder binary name. */
  get binary(): string {
    return this.opts.binary ?? 'pocketsphinx_batch';
  }

  /** @internal ms to wait for decoders after end(). */
  get finishTimeoutMs(): number {
    return this.opts.finishTimeoutMs ?? 30_000;
  }

  /** @internal Whether the garbage decoder runs. */
  get rejectionEnabled(): boolean {
    return this.opts.rejection?.enabled !== false;
  }

  /** @internal Whether audio is cleaned before decoding. */
  get prepareAudio(): boolean {
    return this.opts.prepareAudio ?? true;
  }

  private get modelDir(): string {
    return this.opts.modelDir ?? DEBIAN_MODEL_DIR;
  }

  private async ensureRoot(): Promise<string> {
    if (!this.root) this.root = this.opts.workDir ?? (await mkdtemp(path.join(os.tmpdir(), 'homeagent-ps-')));
    return this.root;
  }

  /**
   * Build the grammar and dictionary for `vocab` (call again whenever the
   * devices change). Sessions started afterwards use it; a session started
   * while it is being built waits for it. Rejects with GrammarError or
   * PronunciationError.
   */
  async setVocabulary(vocab: Vocabulary): Promise<GrammarInfo> {
    // Builds may overlap (devices announced in a burst): only the newest request may become the grammar,
    // whichever build finishes last.
    const mine = ++this.requested;
    const build = async (): Promise<{ g: Grammar; info: GrammarInfo }> => {
      const root = await this.ensureRoot();
      const dir = path.join(root, `g${++this.generation}`);
      await mkdir(dir, { recursive: true });
      const g = buildGrammar(vocab);
      await writeFile(path.join(dir, 'command.fsg'), g.fsg);
      await writeFile(path.join(dir, 'command.jsgf'), g.jsgf);
      const garbage = garbageGrammar();
      await writeFile(path.join(dir, 'garbage.fsg'), garbage.fsg);
      await writeFile(path.join(dir, 'garbage.dict'), garbage.dict);
      const report = await writeDictionary(g.words, path.join(dir, 'command.dict'), {
        dictionary: this.opts.dictionary ?? DEBIAN_CMUDICT,
        espeakBinary: this.opts.espeakBinary,
      });
      if (Object.keys(report.generated).length > 0) log.info({ generated: report.generated }, 'generated pronunciations');
      return { g: { dir, vocab }, info: { dir, words: g.words.length, generated: report.generated } };
    };
    const p = build();
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
    if (mine !== this.requested || this.closed) {
      // A newer vocabulary was requested meanwhile (or the engine closed): this build is already stale.
      this.retire(g);
      return info;
    }
    const old = this.grammar;
    this.grammar = g;
    if (this.pending === pending) this.pending = undefined;
    if (old) this.retire(old);
    return info;
  }

  /** Number of setVocabulary calls so far (the newest wins). */
  private requested = 0;
  /** Sessions using each grammar; a replaced grammar's files go when its last session is done. */
  private readonly users = new Map<Grammar, number>();
  private readonly retired = new Set<Grammar>();
  private readonly open = new Set<PocketsphinxSession>();
  private closed = false;

  /** Remove a replaced grammar's directory now, or when the last session using it is done. */
  private retire(g: Grammar): void {
    if ((this.users.get(g) ?? 0) > 0) this.retired.add(g);
    else void rm(g.dir, { recursive: true, force: true });
  }

  /** @internal A session uses `g` (its decoders read its files) until ungrabGrammar. */
  grabGrammar(g: Grammar, session: PocketsphinxSession): boolean {
    if (this.closed) return false;
    this.users.set(g, (this.users.get(g) ?? 0) + 1);
    this.open.add(session);
    return true;
  }

  /** @internal The session is done with `g`. */
  ungrabGrammar(g: Grammar, session: PocketsphinxSession): void {
    this.open.delete(session);
    const n = (this.users.get(g) ?? 1) - 1;
    if (n > 0) {
      this.users.set(g, n);
      return;
    }
    this.users.delete(g);
    if (this.retired.delete(g)) void rm(g.dir, { recursive: true, force: true });
  }

  private async currentGrammar(): Promise<Grammar> {
    if (this.pending) return this.pending;
    if (!this.grammar) throw new SttNoGrammarError();
    return this.grammar;
  }

  /** Start one utterance. PCM: 16 kHz mono s16le. */
  start(_opts?: { language?: string }): SttSession {
    return new PocketsphinxSession(this, this.currentGrammar());
  }

  /** @internal A fresh directory for one utterance. */
  async sessionDir(): Promise<string> {
    const root = await this.ensureRoot();
    const dir = path.join(root, `u${++this.sessions}-${process.pid}`);
    await mkdir(dir, { recursive: true });
    return dir;
  }

  /**
   * @internal Spawn the decoders of one session: each loads the model and
   * its grammar, then waits for the utterance id on its named-pipe ctl file.
   */
  spawnDecoders(g: Grammar, dir: string): { grammar: ChildProcess; garbage?: ChildProcess } {
    const common = (ctl: string, seg: string): string[] => [
      '-hmm', path.join(this.modelDir, 'en-us'),
      '-ctl', ctl,
      '-cepdir', dir,
      '-cepext', '.raw',
      '-adcin', 'yes',
      '-hypseg', seg,
      ...(this.opts.frontendArgs ?? DEFAULT_FRONTEND_ARGS),
    ];
    const grammar = spawnDecoder(this.binary, [
      ...common(path.join(dir, 'grammar.ctl'), path.join(dir, 'grammar.seg')),
      ...(this.opts.decoderArgs ?? DEFAULT_DECODER_ARGS),
      '-dict', path.join(g.dir, 'command.dict'),
      '-fsg', path.join(g.dir, 'command.fsg'),
    ]);
    this.track(grammar);
    if (!this.rejectionEnabled) return { grammar };
    const garbage = spawnDecoder(this.binary, [
      ...common(path.join(dir, 'garbage.ctl'), path.join(dir, 'garbage.seg')),
      ...(this.opts.rejection?.garbageArgs ?? DEFAULT_GARBAGE_ARGS),
      '-dict', path.join(g.dir, 'garbage.dict'),
      '-fsg', path.join(g.dir, 'garbage.fsg'),
    ]);
    this.track(garbage);
    return { grammar, garbage };
  }

  private track(p: ChildProcess): void {
    this.live.add(p);
    p.once('close', () => this.live.delete(p));
    p.once('error', () => this.live.delete(p));
  }

  /** @internal Turn decoder output into a result. */
  judge(g: Grammar, main: HypsegUtterance | undefined, mainStderr: string, garbage: HypsegUtterance | undefined, droppedMs: number): { result: SttResult; details: PocketsphinxDetails } {
    const hypothesis = main ? hypsegText(main) : '';
    const grammarMismatch = /Final result does not match the grammar/.test(mainStderr);
    const text = hypothesis ? normaliseText(hypothesis, 'en') : '';
    const intent = text && !grammarMismatch ? matchIntent(hypothesis, g.vocab, 'en') : null;
    let scoreGap: number | undefined;
    if (main && garbage && main.frames > 0) scoreGap = (garbage.ascr - main.ascr) / main.frames;
    const details: PocketsphinxDetails = { hypothesis, grammarMismatch, scoreGap, frames: main?.frames ?? 0, droppedMs };
    const maxGap = this.opts.rejection?.maxScoreGap ?? DEFAULT_MAX_SCORE_GAP;
    const outOfGrammar = scoreGap !== undefined && scoreGap > maxGap;
    const rejected = !text || grammarMismatch || intent === null || outOfGrammar;
    // Confidence: 1 well inside, 0.5 at the threshold, towards 0 beyond it.
    const confidence = !text ? 0 : scoreGap === undefined ? (rejected ? 0.2 : 0.8) : 1 / (1 + Math.exp((scoreGap - maxGap) / 3));
    const result: SttResult = {
      text: rejected ? '' : text,
      confidence: Math.max(0, Math.min(1, confidence)),
      rejected,
      engine: this.name,
      ...(intent && !rejected ? { intent } : {}),
    };
    return { result, details };
  }

  /** Abort every open session, kill running decoders and remove the work directory when it was created here. Sessions started later reject end() with STT_NO_GRAMMAR. */
  async close(): Promise<void> {
    this.closed = true;
    this.pending = undefined;
    for (const session of [...this.open]) session.abort();
    for (const p of this.live) killGroup(p);
    this.live.clear();
    if (this.root && !this.opts.workDir) await rm(this.root, { recursive: true, force: true });
    this.root = undefined;
    this.grammar = undefined;
  }
}

/** Spawn one decoder as the leader of its own process group (so killGroup ends it and nothing else). */
function spawnDecoder(bin: string, args: string[]): ChildProcess {
  return spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
}

/** SIGKILL a process group started by spawnDecoder (by its id, nothing else). */
function killGroup(p: ChildProcess): void {
  if (p.pid === undefined || p.exitCode !== null || p.signalCode !== null) return;
  try {
    process.kill(-p.pid, 'SIGKILL');
  } catch {
    p.kill('SIGKILL');
  }
}

interface RunningDecoder {
  proc: ChildProcess;
  stderr: string;
  done: Promise<void>;
  /** Write end of the decoder's named-pipe ctl file. */
  ctl: FileHandle | undefined;
  /** Resolves when the decoder has read an utterance id from its ctl file. */
  reading: Promise<void>;
}

function runDecoder(proc: ChildProcess, binary: string): RunningDecoder {
  let markReading = (): void => undefined;
  const d: RunningDecoder = { proc, stderr: '', done: Promise.resolve(), ctl: undefined, reading: new Promise<void>((r) => (markReading = r)) };
  proc.stderr?.setEncoding('utf8').on('data', (s: string) => {
    // Keep the tail only: the model loading log is long and not needed.
    d.stderr = (d.stderr + s).slice(-20_000);
    if (/Decoding '/.test(d.stderr)) markReading();
  });
  d.done = new Promise<void>((resolve, reject) => {
    proc.once('error', (err: NodeJS.ErrnoException) => {
      reject(
        err.code === 'ENOENT'
          ? new SttUnavailableError(`${binary} not found: install the Debian packages pocketsphinx and pocketsphinx-en-us`, { cause: err })
          : new SttFailedError(`${binary}: ${err.message}`, { cause: err }),
      );
    });
    proc.once('close', (code, signal) => {
      if (code === 0) resolve();
      else {
        const tail = d.stderr.split('\n').filter((l) => /ERROR|FATAL/.test(l)).slice(-3).join(' | ');
        reject(new SttFailedError(`${binary} exited with ${code ?? signal}${tail ? `: ${tail}` : ''}`));
      }
    });
  });
  d.done.catch(() => undefined);
  return d;
}

/** Create a named pipe and open it read-write (never blocks, even before the decoder opens it). */
async function openFifo(file: string): Promise<FileHandle> {
  await execFileP('mkfifo', ['-m', '600', file]);
  return open(file, fsConstants.O_RDWR);
}

async function readSeg(file: string): Promise<HypsegUtterance | undefined> {
  const text = await readFile(file, 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    const u = parseHypsegLine(line);
    if (u) return u;
  }
  return undefined;
}

interface Decoders {
  dir: string;
  grammar: Grammar;
  main: RunningDecoder;
  garbage?: RunningDecoder;
}

/** A decode of one snapshot of the utterance. */
interface Decode {
  result: Promise<{ result: SttResult; details: PocketsphinxDetails }>;
  decoders: Decoders | undefined;
}

/**
 * One utterance. A pair of decoders (grammar + garbage) is started at once
 * and loads while the person speaks. pause() (the endpointer heard a short
 * silence) hands the audio so far to that pair at once — a speculative final
 * pass — and starts a fresh pair in case speech goes on; resume() (it did)
 * kills the speculative pass. end() without speech in between takes the
 * speculative result, which is usually ready by the time the endpointer's
 * longer silence has confirmed the end; otherwise it decodes everything now.
 * Only silence can follow a pause without a resume, so both give the same
 * transcript.
 */
class PocketsphinxSession implements SttSession {
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  private aborted = false;
  private ended = false;
  /** The idle decoder pair for the next decode (loading or waiting on its ctl pipe); undefined once taken. */
  private idle: Promise<Decoders | undefined> | undefined;
  private speculative: Decode | undefined;
  private readonly owned = new Set<Decoders>();
  private ending: Promise<SttResult> | undefined;
  /** The grammar this session holds (its files stay until done()). */
  private held: Grammar | undefined;
  private finished = false;
  private readonly grammar: Promise<Grammar>;

  constructor(
    private readonly engine: PocketsphinxStt,
    grammar: Promise<Grammar>,
  ) {
    this.grammar = grammar.then((g) => {
      if (!this.finished && engine.grabGrammar(g, this)) this.held = g;
      return g;
    });
    this.grammar.catch(() => undefined);
    this.idle = this.setUp();
    this.idle.catch(() => undefined);
  }

  /** The session is over: give the grammar back (a replaced grammar's files may go now). */
  private done(): void {
    this.finished = true;
    if (this.held) this.engine.ungrabGrammar(this.held, this);
    this.held = undefined;
  }

  /** Start a decoder pair; undefined when aborted or finished meanwhile. Rejects when the grammar is missing. */
  private async setUp(): Promise<Decoders | undefined> {
    const g = await this.grammar;
    if (this.aborted || this.finished || !this.held) return undefined;
    const dir = await this.engine.sessionDir();
    const mainCtl = await openFifo(path.join(dir, 'grammar.ctl'));
    const garbageCtl = !this.engine.rejectionEnabled ? undefined : await openFifo(path.join(dir, 'garbage.ctl'));
    const bin = this.engine.binary;
    const p = this.engine.spawnDecoders(g, dir);
    const main = runDecoder(p.grammar, bin);
    main.ctl = mainCtl;
    const garbage = p.garbage ? runDecoder(p.garbage, bin) : undefined;
    if (garbage) garbage.ctl = garbageCtl;
    else await garbageCtl?.close();
    const d: Decoders = { dir, grammar: g, main, ...(garbage ? { garbage } : {}) };
    this.owned.add(d);
    if (this.aborted) {
      await this.release(d);
      return undefined;
    }
    return d;
  }

  /**
   * Take the idle pair (starting one if there is none). A fresh pair is
   * started only when needed (resume()), so its model loading does not
   * compete for the CPU with a speculative pass.
   */
  private takeIdle(): Promise<Decoders | undefined> {
    const taken = this.idle ?? this.setUp();
    taken.catch(() => undefined);
    this.idle = undefined;
    return taken;
  }

  write(pcm: Buffer): void {
    if (this.aborted || this.ended || pcm.length === 0) return;
    this.chunks.push(Buffer.from(pcm));
    this.bytes += pcm.length;
  }

  /** Speech paused: decode the audio so far now (see the class comment). */
  pause(): void {
    if (this.aborted || this.ended || this.speculative || this.bytes < MIN_UTTERANCE_MS * 32) return;
    this.speculative = this.startDecode(this.takeIdle(), false);
  }

  /** Speech went on after pause(): the speculative decode is void. Ignored after end(). */
  resume(): void {
    const spec = this.speculative;
    if (!spec || this.ended || this.aborted) return;
    this.speculative = undefined;
    if (spec.decoders) void this.release(spec.decoders);
    spec.result.catch(() => undefined);
    // More speech: have a pair loading for the next pause or the end.
    if (!this.idle) {
      this.idle = this.setUp();
      this.idle.catch(() => undefined);
    }
  }

  private startDecode(pair: Promise<Decoders | undefined>, final: boolean): Decode {
    const raw = Buffer.concat(this.chunks);
    const decode = { decoders: undefined } as Decode;
    decode.result = pair.then(async (d) => {
      if (!d || this.aborted) throw new SttAbortedError();
      decode.decoders = d;
      // A speculative decode voided while its pair was still loading.
      if (!final && this.speculative !== decode) {
        await this.release(d);
        throw new SttAbortedError();
      }
      return this.decode(d, raw);
    });
    decode.result.catch(() => undefined);
    return decode;
  }

  /** No more audio: the result (the same promise on every call). */
  end(): Promise<SttResult> {
    this.ending ??= this.finish();
    return this.ending;
  }

  private async finish(): Promise<SttResult> {
    if (this.aborted) throw new SttAbortedError();
    this.ended = true;
    const t0 = performance.now();
    const decode = this.speculative ?? this.startDecode(this.takeIdle(), true);
    try {
      const { result, details } = await decode.result;
      this.engine.lastDetails = details;
      return { ...result, finish_ms: performance.now() - t0 };
    } catch (err) {
      if (this.aborted) throw new SttAbortedError();
      throw err;
    } finally {
      await this.releaseAll();
      this.done();
    }
  }

  /** Run one decode of `raw` on the pair `d`; the pair is used up. */
  private async decode(d: Decoders, raw: Buffer): Promise<{ result: SttResult; details: PocketsphinxDetails }> {
    const timer = setTimeout(() => killPair(d), this.engine.finishTimeoutMs);
    try {
      const prepared = this.engine.prepareAudio ? prepareUtterance(raw) : { pcm: raw, report: { droppedSamples: 0 } };
      const droppedMs = prepared.report.droppedSamples / 16;
      if (prepared.pcm.length < MIN_UTTERANCE_MS * 32) {
        // Nothing worth decoding; still surface a missing binary as such (the kill itself is no failure).
        killPair(d);
        const missing = d.main.done.then(
          () => undefined,
          (err: unknown) => {
            if (err instanceof SttUnavailableError) throw err;
          },
        );
        await Promise.race([missing, new Promise((r) => setTimeout(r, 50))]);
        return {
          result: { text: '', confidence: 0, rejected: true, engine: this.engine.name },
          details: { hypothesis: '', grammarMismatch: false, frames: 0, droppedMs },
        };
      }
      await writeFile(path.join(d.dir, 'utt.raw'), prepared.pcm);
      for (const r of [d.main, d.garbage]) {
        if (!r?.ctl) continue;
        // A pipe's data is dropped when every end is closed and the decoder may not have
        // opened its end yet: close ours only once it has read the line (it logs
        // "Decoding 'utt'"); then it decodes, reads the end of the pipe and exits.
        await r.ctl.write('utt\n');
      }
      for (const r of [d.main, d.garbage]) {
        if (!r?.ctl) continue;
        await Promise.race([r.reading, r.done.catch(() => undefined)]);
        await r.ctl.close();
        r.ctl = undefined;
      }
      await Promise.all([d.main.done, d.garbage?.done]);
      const [main, garbage] = await Promise.all([readSeg(path.join(d.dir, 'grammar.seg')), d.garbage ? readSeg(path.join(d.dir, 'garbage.seg')) : undefined]);
      return this.engine.judge(d.grammar, main, d.main.stderr, garbage, droppedMs);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Kill a pair's decoders and remove its directory. */
  private async release(d: Decoders): Promise<void> {
    if (!this.owned.delete(d)) return;
    killPair(d);
    for (const r of [d.main, d.garbage]) {
      await r?.ctl?.close().catch(() => undefined);
      if (r) r.ctl = undefined;
    }
    await rm(d.dir, { recursive: true, force: true });
  }

  private async releaseAll(): Promise<void> {
    await Promise.all([...this.owned].map((d) => this.release(d)));
    // A pair still being set up releases itself (aborted) or is released here once it exists.
    void this.idle?.then((d) => d && this.release(d), () => undefined);
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.chunks.length = 0;
    void this.releaseAll().then(() => this.done());
  }
}

/** SIGKILL both decoders of a pair. */
function killPair(d: Decoders): void {
  killGroup(d.main.proc);
  if (d.garbage) killGroup(d.garbage.proc);
}
