/**
 * Local command recognition with the real pocketsphinx of Debian 12:
 * packages pocketsphinx + pocketsphinx-en-us, version 0.8+5prealpha, which
 * ship `pocketsphinx_continuous` (not the v5 `pocketsphinx single/live` CLI)
 * and the model in /usr/share/pocketsphinx/model/en-us. One utterance = one
 * decoder process reading raw 16 kHz s16le PCM from stdin (`-infile
 * /dev/stdin`), so decoding runs while the person speaks and only the tail is
 * left at end(). The grammar is the intent templates filled with the home's
 * vocabulary (src/intents buildGrammar, loaded as an epsilon-free `-fsg`),
 * the dictionary a subset of the CMU dictionary plus espeak-ng-generated
 * pronunciations (pronunciation.ts).
 *
 * A grammar accepts anything as its nearest sentence, so a second measure
 * decides rejection: a phone-loop decode (`-allphone` with the model's phone
 * LM, context-independent phones) runs on the same audio in parallel; when
 * the grammar path's acoustic score per frame falls too far below the free
 * phone loop's, the speech is out of grammar. No path to the grammar's final
 * state, or a transcript no template matches, is a rejection too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildGrammar, matchIntent, normaliseText } from '../../intents/index.js';
import type { Vocabulary } from '../../intents/types.js';
import { createLogger } from '../../kernel/log.js';
import type { SttEngine, SttResult, SttSession } from './types.js';
import { DEBIAN_CMUDICT, DEBIAN_MODEL_DIR, writeDictionary } from './pronunciation.js';
import { acousticTotals, parseDecodeOutput, wordFrames, type DecodeOutput } from './pocketsphinx-log.js';
import { SttAbortedError, SttFailedError, SttNoGrammarError, SttUnavailableError } from './errors.js';

const log = createLogger('stt:pocketsphinx');

/**
 * Front-end settings shared by both decoders (so their frames line up).
 * `-remove_noise no`: the spectral-subtraction noise estimate of 5prealpha is
 * thrown off by clicks at the start of an utterance and ruins decoding of
 * real recordings; `-vad_postspeech 300`: 3 s, so a pause inside a command
 * does not split it (the endpointer in src/voice decides where it ends).
 */
export const DEFAULT_FRONTEND_ARGS: readonly string[] = ['-remove_noise', 'no', '-vad_postspeech', '300'];

/** Search settings of the grammar decoder: a lower language weight than the default 6.5 (FSG arcs share probability per state). */
export const DEFAULT_DECODER_ARGS: readonly string[] = ['-lw', '2'];

/** Extra settings of the phone-loop decoder (narrow beams: it only gives a reference score). */
export const DEFAULT_PHONE_LOOP_ARGS: readonly string[] = ['-allphone_ci', 'yes', '-beam', '1e-20', '-pbeam', '1e-20'];

/** Options of PocketsphinxStt. */
export interface PocketsphinxOptions {
  /** Decoder binary; default 'pocketsphinx_continuous' on PATH. */
  binary?: string;
  /** Model directory holding en-us/ (acoustic model) and en-us-phone.lm.bin; default Debian's. */
  modelDir?: string;
  /** Full pronouncing dictionary; default Debian's cmudict-en-us.dict. */
  dictionary?: string;
  /** Where grammar and dictionary files go; default a fresh directory in os.tmpdir(), removed by close(). */
  workDir?: string;
  /** Front-end settings for both decoders (see DEFAULT_FRONTEND_ARGS). */
  frontendArgs?: readonly string[];
  /** Search settings of the grammar decoder (see DEFAULT_DECODER_ARGS). */
  decoderArgs?: readonly string[];
  /** Out-of-grammar rejection by the phone-loop comparison. */
  rejection?: {
    /** Default true. */
    enabled?: boolean;
    /** Reject when (phone-loop ascr - grammar ascr) / frames exceeds this; default DEFAULT_MAX_SCORE_GAP. */
    maxScoreGap?: number;
    /**
     * Reject when the grammar's words explain less than this share of the
     * frames the phone loop finds speech in (speech left over = words the
     * grammar does not have); default DEFAULT_MIN_COVERAGE.
     */
    minCoverage?: number;
    /** Phone-loop decoder settings (see DEFAULT_PHONE_LOOP_ARGS). */
    phoneLoopArgs?: readonly string[];
  };
  /** espeak-ng binary for generated pronunciations. */
  espeakBinary?: string;
  /** Kill a decoder that has not finished this long after end(); default 30000 ms. */
  finishTimeoutMs?: number;
}

/**
 * Default rejection threshold: acoustic score units per 10 ms frame by which
 * the grammar path may trail the free phone loop. Calibrated on the fixture
 * recordings: commands 4..29, out-of-grammar speech forced through the
 * grammar 41 (test/bench/voice-stt.ts prints the measure).
 */
export const DEFAULT_MAX_SCORE_GAP = 35;

/** Default minimum coverage (see PocketsphinxOptions.rejection.minCoverage); calibrated on the fixture recordings. */
export const DEFAULT_MIN_COVERAGE = 0.5;

/** What setVocabulary produced. */
export interface GrammarInfo {
  /** Directory with command.fsg, command.jsgf, command.dict. */
  dir: string;
  words: number;
  /** Words whose pronunciation was generated with espeak-ng. */
  generated: Record<string, string>;
}

/** Details of a decode, for tuning and benchmarks. */
export interface PocketsphinxDetails {
  hypothesis: string;
  grammarMismatch: boolean;
  /** (phone-loop ascr - grammar ascr) / frames; undefined without rejection decoder. */
  scoreGap?: number;
  /** Frames the grammar path explains with words / frames the phone loop finds speech in (0..). */
  coverage?: number;
  frames: number;
}

interface Grammar {
  dir: string;
  vocab: Vocabulary;
}

/** The pocketsphinx command recogniser (SttEngine 'pocketsphinx'). */
export class PocketsphinxStt implements SttEngine {
  readonly name = 'pocketsphinx';
  private readonly opts: PocketsphinxOptions;
  private grammar: Grammar | undefined;
  private pending: Promise<Grammar> | undefined;
  private root: string | undefined;
  private generation = 0;
  private readonly live = new Set<ChildProcess>();
  /** Details of the last finished utterance. */
  lastDetails: PocketsphinxDetails | undefined;

  constructor(opts: PocketsphinxOptions = {}) {
    this.opts = opts;
  }

  /** @internal Decoder binary name. */
  get binary(): string {
    return this.opts.binary ?? 'pocketsphinx_continuous';
  }

  /** @internal ms to wait for decoders after end(). */
  get finishTimeoutMs(): number {
    return this.opts.finishTimeoutMs ?? 30_000;
  }

  private get modelDir(): string {
    return this.opts.modelDir ?? DEBIAN_MODEL_DIR;
  }

  /**
   * Build the grammar and dictionary for `vocab` (call again whenever the
   * devices change). Sessions started afterwards use it; a session started
   * while it is being built waits for it. Rejects with GrammarError or
   * PronunciationError.
   */
  async setVocabulary(vocab: Vocabulary): Promise<GrammarInfo> {
    const build = async (): Promise<{ g: Grammar; info: GrammarInfo }> => {
      if (!this.root) this.root = this.opts.workDir ?? (await mkdtemp(path.join(os.tmpdir(), 'homeagent-ps-')));
      const dir = path.join(this.root, `g${++this.generation}`);
      await mkdir(dir, { recursive: true });
      const g = buildGrammar(vocab);
      await writeFile(path.join(dir, 'command.fsg'), g.fsg);
      await writeFile(path.join(dir, 'command.jsgf'), g.jsgf);
      const report = await writeDictionary(g.words, path.join(dir, 'command.dict'), {
        dictionary: this.opts.dictionary ?? DEBIAN_CMUDICT,
        espeakBinary: this.opts.espeakBinary,
      });
      if (Object.keys(report.generated).length > 0) log.info({ generated: report.generated }, 'generated pronunciations');
      return { g: { dir, vocab }, info: { dir, words: g.words.length, generated: report.generated } };
    };
    const p = build();
    this.pending = p.then((r) => r.g);
    const { g, info } = await p;
    const old = this.grammar;
    this.grammar = g;
    this.pending = undefined;
    // Old generations may still be read by a decoder that is starting: remove them a little later.
    if (old) setTimeout(() => void rm(old.dir, { recursive: true, force: true }), 10_000).unref();
    return info;
  }

  private async currentGrammar(): Promise<Grammar> {
    if (this.pending) return this.pending;
    if (!this.grammar) throw new SttNoGrammarError();
    return this.grammar;
  }

  private baseArgs(): string[] {
    return ['-infile', '/dev/stdin', '-hmm', path.join(this.modelDir, 'en-us'), '-backtrace', 'yes', ...(this.opts.frontendArgs ?? DEFAULT_FRONTEND_ARGS)];
  }

  /** Start one utterance. PCM: 16 kHz mono s16le. */
  start(_opts?: { language?: string }): SttSession {
    return new PocketsphinxSession(this, this.currentGrammar());
  }

  /** @internal Spawn the decoders of one session. */
  spawnDecoders(g: Grammar): { grammar: ChildProcess; phone?: ChildProcess } {
    const bin = this.binary;
    const base = this.baseArgs();
    const grammar = spawnWithPipe(bin, [...base, ...(this.opts.decoderArgs ?? DEFAULT_DECODER_ARGS), '-dict', path.join(g.dir, 'command.dict'), '-fsg', path.join(g.dir, 'command.fsg')]);
    this.track(grammar);
    if (this.opts.rejection?.enabled === false) return { grammar };
    const phone = spawnWithPipe(bin, [...base, '-allphone', path.join(this.modelDir, 'en-us-phone.lm.bin'), ...(this.opts.rejection?.phoneLoopArgs ?? DEFAULT_PHONE_LOOP_ARGS)]);
    this.track(phone);
    return { grammar, phone };
  }

  private track(p: ChildProcess): void {
    this.live.add(p);
    p.once('close', () => this.live.delete(p));
    p.once('error', () => this.live.delete(p));
  }

  /** @internal Turn decoder output into a result. */
  judge(g: Grammar, main: DecodeOutput, phone: DecodeOutput | undefined): SttResult {
    const text = main.hypothesis ? normaliseText(main.hypothesis, 'en') : '';
    const intent = text ? matchIntent(main.hypothesis, g.vocab, 'en') : null;
    const mainTotals = acousticTotals(main.words);
    let scoreGap: number | undefined;
    let coverage: number | undefined;
    if (phone && mainTotals.frames > 0) {
      const p = acousticTotals(phone.words);
      if (p.frames > 0) scoreGap = p.ascr / p.frames - mainTotals.ascr / mainTotals.frames;
      const speech = wordFrames(phone.words);
      if (speech > 0) coverage = wordFrames(main.words) / speech;
    }
    this.lastDetails = { hypothesis: main.hypothesis, grammarMismatch: main.grammarMismatch, scoreGap, coverage, frames: mainTotals.frames };
    const maxGap = this.opts.rejection?.maxScoreGap ?? DEFAULT_MAX_SCORE_GAP;
    const minCoverage = this.opts.rejection?.minCoverage ?? DEFAULT_MIN_COVERAGE;
    const outOfGrammar = (scoreGap !== undefined && scoreGap > maxGap) || (coverage !== undefined && coverage < minCoverage);
    const rejected = !text || main.grammarMismatch || intent === null || outOfGrammar;
    // Confidence: 1 at no gap, 0.5 at the threshold, towards 0 beyond it.
    const confidence = rejected && !text ? 0 : scoreGap === undefined ? (rejected ? 0.2 : 0.8) : 1 / (1 + Math.exp((scoreGap - maxGap) / (maxGap / 4)));
    return {
      text: rejected ? '' : text,
      confidence: Math.max(0, Math.min(1, confidence)),
      rejected,
      engine: this.name,
      ...(intent && !rejected ? { intent } : {}),
    };
  }

  /** Kill running decoders and remove the work directory when it was created here. */
  async close(): Promise<void> {
    for (const p of this.live) killGroup(p);
    this.live.clear();
    if (this.root && !this.opts.workDir) await rm(this.root, { recursive: true, force: true });
    this.root = undefined;
    this.grammar = undefined;
  }
}

/**
 * Spawn `bin args` reading stdin through a real pipe: Node gives a child a
 * socket as stdin, and pocketsphinx_continuous cannot open /dev/stdin when it
 * is a socket (ENXIO), so `cat` bridges the two. The child leads its own
 * process group so killGroup() ends cat and the decoder together.
 */
function spawnWithPipe(bin: string, args: string[]): ChildProcess {
  return spawn('sh', ['-c', 'cat | exec "$0" "$@"', bin, ...args], { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
}

/** SIGKILL a process group started by spawnWithPipe (by its id, nothing else). */
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
  stdout: string;
  stderr: string;
  done: Promise<void>;
}

function runDecoder(proc: ChildProcess, binary: string): RunningDecoder {
  const d: RunningDecoder = { proc, stdout: '', stderr: '', done: Promise.resolve() };
  proc.stdout?.setEncoding('utf8').on('data', (s: string) => (d.stdout += s));
  proc.stderr?.setEncoding('utf8').on('data', (s: string) => (d.stderr += s));
  proc.stdin?.on('error', () => undefined); // EPIPE when the decoder died: reported by 'close'.
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
      else if (code === 127) {
        reject(new SttUnavailableError(`${binary} not found: install the Debian packages pocketsphinx and pocketsphinx-en-us`));
      } else {
        const tail = d.stderr.split('\n').filter((l) => /ERROR|FATAL/.test(l)).slice(-3).join(' | ');
        reject(new SttFailedError(`${binary} exited with ${code ?? signal}${tail ? `: ${tail}` : ''}`));
      }
    });
  });
  d.done.catch(() => undefined);
  return d;
}

class PocketsphinxSession implements SttSession {
  private decoders: { main: RunningDecoder; phone?: RunningDecoder; grammar: Grammar } | undefined;
  private readonly queued: Buffer[] = [];
  private aborted = false;
  private ended = false;
  private readonly ready: Promise<void>;

  constructor(private readonly engine: PocketsphinxStt, grammar: Promise<Grammar>) {
    this.ready = grammar.then((g) => {
      if (this.aborted) return;
      const bin = engine.binary;
      const p = engine.spawnDecoders(g);
      this.decoders = { grammar: g, main: runDecoder(p.grammar, bin), ...(p.phone ? { phone: runDecoder(p.phone, bin) } : {}) };
      for (const chunk of this.queued.splice(0)) this.send(chunk);
      if (this.ended) this.closeInput();
    });
    this.ready.catch(() => undefined);
  }

  private send(pcm: Buffer): void {
    const d = this.decoders;
    if (!d) return;
    if (d.main.proc.stdin?.writable) d.main.proc.stdin.write(pcm);
    if (d.phone?.proc.stdin?.writable) d.phone.proc.stdin.write(pcm);
  }

  private closeInput(): void {
    this.decoders?.main.proc.stdin?.end();
    this.decoders?.phone?.proc.stdin?.end();
  }

  write(pcm: Buffer): void {
    if (this.aborted || this.ended || pcm.length === 0) return;
    if (this.decoders) this.send(pcm);
    else this.queued.push(Buffer.from(pcm));
  }

  async end(): Promise<SttResult> {
    if (this.aborted) throw new SttAbortedError();
    this.ended = true;
    const t0 = performance.now();
    await this.ready;
    if (this.aborted || !this.decoders) throw new SttAbortedError();
    this.closeInput();
    const { main, phone, grammar } = this.decoders;
    const timer = setTimeout(() => this.kill(), this.engine.finishTimeoutMs);
    try {
      await Promise.all([main.done, phone?.done]);
    } catch (err) {
      if (this.aborted) throw new SttAbortedError();
      throw err;
    } finally {
      clearTimeout(timer);
    }
    const result = this.engine.judge(
      grammar,
      parseDecodeOutput(main.stdout, main.stderr),
      phone ? parseDecodeOutput(phone.stdout, phone.stderr) : undefined,
    );
    return { ...result, finish_ms: performance.now() - t0 };
  }

  private kill(): void {
    if (this.decoders) killGroup(this.decoders.main.proc);
    if (this.decoders?.phone) killGroup(this.decoders.phone.proc);
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.queued.length = 0;
    this.kill();
  }
}
