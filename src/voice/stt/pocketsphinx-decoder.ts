/**
 * The pocketsphinx decoder processes: a pair of `pocketsphinx_batch` runs
 * (the command grammar, and the garbage phone loop when rejection is on;
 * with a third on the compound grammar, two commands in one breath)
 * that load the model and grammar at once and then wait on a named pipe (their
 * `-ctl` file) for the utterance; decode() writes the audio, hands its id
 * over, and reads both `-hypseg` results. Each decoder leads its own process
 * group, so a kill ends it and nothing else.
 *
 * Debian 12: packages pocketsphinx + pocketsphinx-en-us (0.8+5prealpha),
 * model in /usr/share/pocketsphinx/model/en-us.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { open, readFile, rm, writeFile, type FileHandle } from 'node:fs/promises';
import { constants as fsConstants } from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { parseHypsegLine, type HypsegUtterance } from './pocketsphinx-log.js';
import type { AlignWord } from './pocketsphinx-judge.js';
import { SttAbortedError, SttFailedError, SttUnavailableError } from './errors.js';
import type { Grammar } from './pocketsphinx-grammar.js';

const execFileP = promisify(execFile);

/** How decoders are run (see the settings' docs in pocketsphinx.ts). */
export interface DecoderSettings {
  /** Decoder binary (pocketsphinx_batch). */
  binary: string;
  /** Acoustic model directory (holding the model's files: mdef, means, ...). */
  hmm: string;
  /** Front-end settings of both decoders (so their frames line up). */
  frontendArgs: readonly string[];
  /** Search settings of the grammar decoder. */
  decoderArgs: readonly string[];
  /** Search settings of the garbage decoder; undefined: no garbage decoder (rejection off). */
  garbageArgs: readonly string[] | undefined;
  /**
   * Search settings of a third decoder on the compound grammar (compound.fsg:
   * two commands in one breath, issue 15) run beside the command grammar (not
   * for the continuation grammar); undefined: none.
   */
  compoundArgs: readonly string[] | undefined;
}

/** What one decode of a pair read back. */
export interface PairOutput {
  /** The grammar decoder's best path; undefined when it found none. */
  main: HypsegUtterance | undefined;
  /** The tail of the grammar decoder's log ("Final result does not match the grammar"). */
  mainStderr: string;
  /** The garbage decoder's best path (undefined without it). */
  garbage: HypsegUtterance | undefined;
  /** The compound grammar decoder's best path (undefined without it, or when it found none). */
  compound?: HypsegUtterance;
  /** The tail of the compound decoder's log. */
  compoundStderr?: string;
}

/**
 * Shares one garbage (phone loop) decode among the sessions that decode the
 * same audio at once: a session started while a yes/no question waits
 * decodes every pause with the answer grammar and the command grammar side
 * by side (capture.ts answerOrCommand), and their phone loops read the same
 * samples with the same model, settings and garbage.fsg. `key` names the
 * audio and the grammar files; `run` starts this pair's own phone loop. The
 * first caller for a key runs it; later callers get its result. On 2 cores
 * the fourth decoder was what made an utterance heard while a question
 * waited slow: the real recording "timer status" right after "Do you
 * really want to turn on ...?" was acted on 480 to 520 ms after its last
 * word (300 with no question waiting); sharing the phone loop, 340 to 420
 * (three pairs of runs one after the other, test/bench/voice.ts's order).
 */
export type GarbageShare = (key: string, run: () => Promise<HypsegUtterance | undefined>) => Promise<HypsegUtterance | undefined>;

/**
 * A GarbageShare that keeps each decode for `keepMs` after it settles (the
 * sessions of one question call it within milliseconds of each other).
 */
export function garbageShare(keepMs = 5_000): GarbageShare {
  const running = new Map<string, Promise<HypsegUtterance | undefined>>();
  return (key, run) => {
    const known = running.get(key);
    if (known) return known;
    const p = run();
    running.set(key, p);
    const forget = (): void => {
      setTimeout(() => {
        if (running.get(key) === p) running.delete(key);
      }, keepMs).unref();
    };
    p.then(forget, () => {
      // A failed or killed decode (its pass was voided) is no result: the next caller runs its own.
      if (running.get(key) === p) running.delete(key);
    });
    return p;
  };
}

/** Spawn one decoder as the leader of its own process group (so killDecoderProcess ends it and nothing else). */
function spawnDecoder(bin: string, args: string[]): ChildProcess {
  return spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
}

/** The arguments every `pocketsphinx_batch` run shares: the model, utterance ids from `ctl`, raw audio `dir`/<id>.raw, the best path to `seg`, the front end. */
function batchArgs(settings: DecoderSettings, dir: string, ctl: string, seg: string): string[] {
  return ['-hmm', settings.hmm, '-ctl', ctl, '-cepdir', dir, '-cepext', '.raw', '-adcin', 'yes', '-hypseg', seg, ...settings.frontendArgs];
}

/** SIGKILL a decoder's process group (by its id, nothing else); nothing when it has exited. */
export function killDecoderProcess(p: ChildProcess): void {
  if (p.pid === undefined || p.exitCode !== null || p.signalCode !== null) return;
  try {
    process.kill(-p.pid, 'SIGKILL');
  } catch {
    p.kill('SIGKILL');
  }
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

/** One decoder process: its log tail, its exit, its ctl pipe. */
class Decoder {
  stderr = '';
  /** Resolves when it exits 0; rejects with SttUnavailableError (binary missing) or SttFailedError. */
  readonly done: Promise<void>;
  /** Resolves when it has read an utterance id from its ctl file. */
  readonly reading: Promise<void>;
  /** Write end of the named-pipe ctl file; undefined once closed. */
  private ctl: FileHandle | undefined;

  constructor(
    readonly proc: ChildProcess,
    binary: string,
    ctl: FileHandle | undefined,
  ) {
    this.ctl = ctl;
    let markReading = (): void => undefined;
    this.reading = new Promise<void>((r) => (markReading = r));
    proc.stderr?.setEncoding('utf8').on('data', (s: string) => {
      // Keep the tail only: the model loading log is long and not needed.
      this.stderr = (this.stderr + s).slice(-20_000);
      if (/Decoding '/.test(this.stderr)) markReading();
    });
    this.done = new Promise<void>((resolve, reject) => {
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
          const tail = this.stderr.split('\n').filter((l) => /ERROR|FATAL/.test(l)).slice(-3).join(' | ');
          reject(new SttFailedError(`${binary} exited with ${code ?? signal}${tail ? `: ${tail}` : ''}`));
        }
      });
    });
    this.done.catch(() => undefined);
  }

  /** Hand the utterance id over. */
  async send(line: string): Promise<void> {
    await this.ctl?.write(line);
  }

  /**
   * Close our end of the pipe once the decoder has read the id: a pipe's data
   * is dropped when every end is closed and the decoder may not have opened its
   * end yet. It logs "Decoding 'utt'", decodes, reads the end of the pipe and exits.
   */
  async closeAfterRead(): Promise<void> {
    if (!this.ctl) return;
    await Promise.race([this.reading, this.done.catch(() => undefined)]);
    await this.closeCtl();
  }

  async closeCtl(): Promise<void> {
    const c = this.ctl;
    this.ctl = undefined;
    await c?.close().catch(() => undefined);
  }

  kill(): void {
    killDecoderProcess(this.proc);
  }
}

/**
 * Align each of `sentences` (word lists of the grammar's dictionary) on the
 * audio `dir`/utt.raw, the one a DecoderPair decoded: one
 * `pocketsphinx_batch` per sentence, all at once, each on a linear FSG of its
 * words (fillers and silences where they fit, -fsgusefiller; pronunciation
 * variants, -fsgusealtpron). Returns each sentence's path in order (its
 * acoustic score `ascr` and `frames`), undefined where the aligner found
 * none (it still writes a line of 0 frames then). For the opposite-word check (pocketsphinx-judge.ts OPPOSITE_WORDS).
 * `track` sees every process (the engine kills what is left at close());
 * a run that has not finished within `timeoutMs`, or when `signal` aborts
 * (the session was aborted), is killed; once `signal` has aborted, no run
 * starts (SttAbortedError).
 * @throws SttUnavailableError when the binary is missing; SttFailedError when a run fails (or was killed).
 */
export async function alignSentences(
  settings: DecoderSettings,
  dir: string,
  dict: string,
  sentences: readonly (readonly AlignWord[])[],
  track: (p: ChildProcess) => void,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Array<HypsegUtterance | undefined>> {
  // One abort listener for all runs (one per run passed Node's 10 listeners with a number's rivals).
  const runs = new Set<Decoder>();
  const stopAll = (): void => {
    for (const r of runs) r.kill();
  };
  signal?.addEventListener('abort', stopAll, { once: true });
  try {
    return await Promise.all(
      sentences.map(async (words, i) => {
        const fsg = path.join(dir, `align-${i}.fsg`);
        const ctl = path.join(dir, `align-${i}.ctl`);
        const seg = path.join(dir, `align-${i}.seg`);
        const n = words.length;
        // A place with alternatives (a name word's rivals) is one transition per word, equally likely.
        const transitions = words.flatMap((w, k) => (typeof w === 'string' ? [w] : w).map((x: string, _i: number, all: readonly string[]) => `TRANSITION ${k} ${k + 1} ${1 / all.length} ${x}`)).join('\n');
        await writeFile(fsg, `FSG_BEGIN align\nNUM_STATES ${n + 1}\nSTART_STATE 0\nFINAL_STATE ${n}\n${transitions}\nFSG_END\n`);
        await writeFile(ctl, 'utt\n');
        // Aborted while the files were written: start nothing.
        if (signal?.aborted) throw new SttAbortedError();
        const proc = spawnDecoder(settings.binary, [...batchArgs(settings, dir, ctl, seg), ...settings.decoderArgs, '-dict', dict, '-fsg', fsg]);
        track(proc);
        const run = new Decoder(proc, settings.binary, undefined);
        const timer = setTimeout(() => run.kill(), timeoutMs);
        runs.add(run);
        if (signal?.aborted) run.kill();
        try {
          await run.done;
        } finally {
          clearTimeout(timer);
          runs.delete(run);
        }
        // No path through the sentence: pocketsphinx still writes a line (frames 0) and logs that the grammar was not matched.
        const path_ = await readSeg(seg);
        if (!path_ || path_.frames <= 0 || path_.words.length === 0 || /Final result does not match the grammar/.test(run.stderr)) return undefined;
        return path_;
      }),
    );
  } finally {
    signal?.removeEventListener('abort', stopAll);
  }
}

/**
 * A pair of decoders loading (or waiting) in their own directory, ready for
 * one utterance. Used once: decode() then release(), or just release().
 */
export class DecoderPair {
  private constructor(
    /** The pair's directory (ctl pipes, utt.raw, hypseg files). */
    readonly dir: string,
    /** The grammar its decoders loaded. */
    readonly grammar: Grammar,
    private readonly main: Decoder,
    private readonly garbage: Decoder | undefined,
    private readonly compound: Decoder | undefined,
    private readonly share: GarbageShare | undefined,
  ) {}

  /**
   * Make the ctl pipes in `dir` and spawn the decoders; `track` sees every
   * process spawned (the engine kills what is left at close()). `fsgFile`:
   * the grammar decoder's FSG in `grammar.dir` (continuation.fsg for the
   * utterance after an early commit, issue 15).
   */
  static async start(settings: DecoderSettings, grammar: Grammar, dir: string, track: (p: ChildProcess) => void, fsgFile: 'command.fsg' | 'continuation.fsg' | 'answer.fsg' = 'command.fsg', share?: GarbageShare): Promise<DecoderPair> {
    const mainCtl = await openFifo(path.join(dir, 'grammar.ctl'));
    const garbageCtl = settings.garbageArgs === undefined ? undefined : await openFifo(path.join(dir, 'garbage.ctl'));
    const withCompound = settings.compoundArgs !== undefined && fsgFile === 'command.fsg';
    // Every pipe before the first spawn: from the first spawn to the Decoders' listeners nothing may wait (a spawn
    // error is emitted on the next tick and would be lost).
    const compoundCtl = withCompound ? await openFifo(path.join(dir, 'compound.ctl')) : undefined;
    const common = (ctl: string, seg: string): string[] => batchArgs(settings, dir, ctl, seg);
    const mainProc = spawnDecoder(settings.binary, [
      ...common(path.join(dir, 'grammar.ctl'), path.join(dir, 'grammar.seg')),
      ...settings.decoderArgs,
      '-dict', path.join(grammar.dir, 'command.dict'),
      '-fsg', path.join(grammar.dir, fsgFile),
    ]);
    track(mainProc);
    let garbageProc: ChildProcess | undefined;
    if (settings.garbageArgs !== undefined) {
      garbageProc = spawnDecoder(settings.binary, [
        ...common(path.join(dir, 'garbage.ctl'), path.join(dir, 'garbage.seg')),
        ...settings.garbageArgs,
        '-dict', path.join(grammar.dir, 'garbage.dict'),
        '-fsg', path.join(grammar.dir, 'garbage.fsg'),
      ]);
      track(garbageProc);
    }
    let compound: Decoder | undefined;
    if (compoundCtl) {
      const compoundProc = spawnDecoder(settings.binary, [
        ...common(path.join(dir, 'compound.ctl'), path.join(dir, 'compound.seg')),
        ...(settings.compoundArgs ?? []),
        '-dict', path.join(grammar.dir, 'command.dict'),
        '-fsg', path.join(grammar.dir, 'compound.fsg'),
      ]);
      track(compoundProc);
      compound = new Decoder(compoundProc, settings.binary, compoundCtl);
    }
    const main = new Decoder(mainProc, settings.binary, mainCtl);
    const garbage = garbageProc && garbageCtl ? new Decoder(garbageProc, settings.binary, garbageCtl) : undefined;
    return new DecoderPair(dir, grammar, main, garbage, compound, share);
  }

  /**
   * Decode `pcm` (16 kHz mono s16le): write it, hand the id to the grammar
   * and garbage decoders, wait for them to exit and read their results; then,
   * unless `compoundNeeded` says their output settles the utterance, the
   * compound grammar's decoder (loaded and waiting) decodes the same audio.
   * It runs after them, not beside: on a 2-core machine the three together
   * took 543 ms (median, fixture recordings) where the first two took 308,
   * and the command grammar alone mostly settles a command (issue 15, half a
   * second from the last word). With `share` (GarbageShare), a phone loop
   * another session runs on the same audio stands for this pair's own.
   * @throws SttUnavailableError, SttFailedError (a decoder failed or was killed).
   */
  async decode(pcm: Buffer, compoundNeeded: (out: PairOutput) => boolean = () => true): Promise<PairOutput> {
    await writeFile(path.join(this.dir, 'utt.raw'), pcm);
    const run = async (d: Decoder, seg: string): Promise<HypsegUtterance | undefined> => {
      await d.send('utt\n');
      await d.closeAfterRead();
      await d.done;
      return readSeg(path.join(this.dir, seg));
    };
    const garbageDecoder = this.garbage;
    let own: Promise<HypsegUtterance | undefined> | undefined;
    const runOwn = (): Promise<HypsegUtterance | undefined> => (own ??= run(garbageDecoder!, 'garbage.seg'));
    // The same audio decoded by another session's phone loop (GarbageShare); its failure leaves this pair's own to run.
    const key = `${this.grammar.dir}\u0000${createHash('sha1').update(pcm).digest('hex')}`;
    const garbageResult = !garbageDecoder ? Promise.resolve(undefined) : this.share ? this.share(key, runOwn).catch(() => runOwn()) : runOwn();
    const [main, garbage] = await Promise.all([run(this.main, 'grammar.seg'), garbageResult]);
    const out: PairOutput = { main, mainStderr: this.main.stderr, garbage };
    if (!this.compound || !compoundNeeded(out)) return out;
    await this.compound.send('utt\n');
    await this.compound.closeAfterRead();
    await this.compound.done;
    return { ...out, compound: await readSeg(path.join(this.dir, 'compound.seg')), compoundStderr: this.compound.stderr };
  }

  /**
   * Rejects with SttUnavailableError when the grammar decoder could not be
   * started because its binary is missing; resolves when it ends any other
   * way. (After kill(), to tell a missing binary from the kill itself.)
   */
  missingBinary(): Promise<void> {
    return this.main.done.then(
      () => undefined,
      (err: unknown) => {
        if (err instanceof SttUnavailableError) throw err;
      },
    );
  }

  /** The grammar decoder's dictionary (for alignSentences). */
  get dict(): string {
    return path.join(this.grammar.dir, 'command.dict');
  }

  /** SIGKILL both decoders. */
  kill(): void {
    for (const d of this.decoders()) d.kill();
  }

  /** Kill the decoders, close the pipes, wait for them to end and remove the directory. */
  async release(): Promise<void> {
    this.kill();
    for (const d of this.decoders()) await d.closeCtl();
    // Every decoder gone before its directory is: one that was not needed (the compound decoder when the command
    // grammar settled the utterance) is still running until the kill lands, and a file it writes then made rm fail.
    await Promise.allSettled(this.decoders().map((d) => d.done));
    // rm retries a directory a late write refilled (ENOTEMPTY, as a tester's run saw); what still fails stays
    // behind in the grammar's work directory, removed with it when the engine closes: no utterance is lost for it.
    await rm(this.dir, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
  }

  private decoders(): Decoder[] {
    return [this.main, this.garbage, this.compound].filter((d): d is Decoder => d !== undefined);
  }
}
