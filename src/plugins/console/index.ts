/**
 * Text console plugin: talk to the box in a terminal with no audio hardware.
 * Lines typed on `input` become inputs on the `console` channel; replies are
 * printed to `output` as they stream (Cap.Stream: sentence by sentence).
 * It starts with a banner (what is simulated, three example commands, /help,
 * where the logs go; the logs never go to the console itself: log-route.ts).
 * `/stop`, or `stop` alone, is the stop button (acknowledged even when nothing
 * was running); `/quit` asks the service to shut down. A message that arrives
 * while nobody waits for a reply (a timer, a confirmation timing out) is
 * printed on its own line and the prompt is drawn again under it.
 */
import { isStopWord } from '../../kernel/stop-words.js';
import readline from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { OutputMessage } from '../../kernel/output-types.js';
import type { Plugin, PluginSDK } from '../../kernel/sdk.js';
import { Cap } from '../../kernel/output-types.js';
import { visibleText } from '../../kernel/visible-text.js';

/** What the banner says. */
export interface ConsoleBanner {
  /** e.g. "HomeAgent 1.4.0". */
  title: string;
  /** What is simulated on this machine ("microphone and speaker (no sound card)"); empty: nothing. */
  simulated: string[];
  /** Example commands to type (three). */
  examples: string[];
  /** Where the logs go ("/var/lib/homeagent/homeagent.log", "the journal"). */
  logs?: string;
  /**
   * How to talk to the box by voice, one line (src/service/wake-ways.ts
   * wakeSummary: "the box can be woken by: press the button on BCM 17 ...",
   * or why nobody can); undefined: the voice pipeline did not start.
   */
  voice?: string;
  /**
   * Where the devices come from when that is not what this box set up, one
   * line: the embedded broker could not start (its port in use) and the box
   * uses the broker already there ("another HomeAgent's?"); undefined otherwise.
   */
  broker?: string;
}

/** Options of the console plugin. */
export interface ConsoleOptions {
  input?: Readable;
  output?: Writable;
  /** Called on /quit (the service shuts down). */
  onQuit?: () => void;
  /** Show a "> " prompt (interactive terminals). */
  prompt?: boolean;
  /** The command that reaches this service from another terminal, for /help (wake-ways.ts cliCommandFor); default "homeagent". */
  cli?: string;
  /** The start-up banner, read when the console starts (after the plugins before it started). */
  banner?: () => ConsoleBanner;
}


/**
 * The /help text; `cli` is the command that reaches this service from another terminal ("homeagent", or
 * "homeagent --data-dir DIR" when its data directory is not the device's own: a newcomer's help left that out).
 */
export function helpText(cli = 'homeagent'): string {
  return [
    'Type a message to talk to the box; the reply is printed as it comes.',
    '  stop or /stop   the stop button: cut the reply, silence the speaker, drop what is queued',
    '  /help           this help',
    '  /quit, Ctrl-D   shut the service down',
    `Maintenance in another terminal: ${cli} status | devices | logs | config list | doctor (in a checkout: npx ${cli} ...)`,
  ].join('\n');
}

/** The banner's text. */
export function bannerText(b: ConsoleBanner): string {
  const lines = [`${b.title}: text console.`];
  lines.push(b.simulated.length ? `Simulated here: ${b.simulated.join('; ')}.` : 'Running on real hardware (audio, GPIO).');
  if (b.voice) lines.push(`By voice: ${b.voice}.`);
  if (b.broker) lines.push(`Devices: ${b.broker}.`);
  if (b.examples.length) lines.push(`Try: ${b.examples.map((e) => `"${e}"`).join(', ')}.`);
  lines.push('Type stop (or /stop) to cut a reply, /help for help, /quit or Ctrl-D to end.');
  if (b.logs) lines.push(`Logs: ${b.logs}`);
  return lines.join('\n') + '\n';
}

/** The console plugin. Kernel-level: its /stop is the user's stop. */
export class ConsolePlugin implements Plugin {
  readonly name = 'console';
  readonly kernelLevel = true;
  private rl?: readline.Interface;
  private sdk?: PluginSDK;
  private midLine = false;
  /** The prompt is on screen and nothing was printed after it. */
  private promptShown = false;
  private readonly inFlight = new Set<Promise<unknown>>();
  private quitting = false;

  constructor(private readonly opts: ConsoleOptions = {}) {}

  start(sdk: PluginSDK): void {
    this.sdk = sdk;
    sdk.registerOutputChannel('console', Cap.Text | Cap.Stream, 'the text console (a terminal)', (m) => this.print(m));
    sdk.subscribe('stop', () => {
      if (this.midLine) this.write(' [stopped]\n');
      this.midLine = false;
    });
    this.rl = readline.createInterface({ input: this.opts.input ?? process.stdin, terminal: false });
    this.rl.on('line', (line) => this.onLine(line));
    // End of input (Ctrl-D, or the end of a piped script) is /quit: what was typed before still gets its answer.
    this.rl.on('close', () => {
      if (!this.rl || this.quitting) return;
      this.rl = undefined;
      this.quitting = true;
      void Promise.allSettled([...this.inFlight]).then(() => {
        this.write('(end of input: shutting down)\n');
        this.opts.onQuit?.();
      });
    });
    if (this.opts.banner) this.write(bannerText(this.opts.banner()));
    this.showPrompt();
  }

  stop(): void {
    const rl = this.rl;
    this.rl = undefined;
    rl?.close();
  }

  private onLine(raw: string): void {
    // Only what can be seen: a line of NUL or zero-width spaces is no message (visibleText).
    const line = visibleText(raw);
    const sdk = this.sdk;
    this.promptShown = false;
    if (!sdk) return;
    if (!line) return this.showPrompt();
    if (isStopWord(line)) {
      // A reply being printed is cut with " [stopped]" (the stop event); otherwise the stop is acknowledged here,
      // also when nothing was running (a timer's alarm or the speaker may have been).
      const cutting = this.midLine;
      // Lines typed (or piped) before the stop and not answered yet are dropped with it: say how many (a newcomer's
      // piped script lost six commands to a "stop" line with only "(stopped)" shown).
      const waiting = this.inFlight.size;
      sdk.stop('console');
      if (!cutting) this.write(waiting ? `(stopped: ${waiting} ${waiting === 1 ? 'line' : 'lines'} typed before it ${waiting === 1 ? 'was' : 'were'} dropped unanswered)\n` : '(stopped)\n');
      if (this.inFlight.size === 0) this.showPrompt();
      return;
    }
    if (line === '/help' || line === '/?') {
      this.write(helpText(this.opts.cli) + '\n');
      return this.showPrompt();
    }
    if (/^\/[a-z]+$/i.test(line) && line !== '/quit' && line !== '/exit') {
      this.write(`unknown console command ${line}; /help lists them\n`);
      return this.showPrompt();
    }
    if (line === '/quit' || line === '/exit') {
      // Let what was typed before /quit finish (piped scripts), then quit.
      this.quitting = true;
      void Promise.allSettled([...this.inFlight]).then(() => this.opts.onQuit?.());
      return;
    }
    // Who is typing is not known from the console itself ("this is Anna" says it; src/kernel/people.ts).
    const p = sdk.injectInput('console', line).then((r) => {
      if (r.status === 'error' && !r.reply) this.write(`(error: ${r.error ?? 'unknown'})\n`);
    });
    this.inFlight.add(p);
    void p.finally(() => {
      this.inFlight.delete(p);
      if (this.inFlight.size === 0) this.showPrompt();
    });
  }

  /** Draw the prompt (interactive terminals) unless it is already there or the console is closing. */
  private showPrompt(): void {
    if (!this.opts.prompt || this.promptShown || this.quitting || !this.rl) return;
    this.write('> ');
    this.promptShown = true;
  }

  private print(m: OutputMessage): void {
    // Nobody waits for this (a timer, a confirmation's outcome): it gets its own line and the prompt comes back.
    const unprompted = this.inFlight.size === 0;
    if (m.kind === 'sentence') {
      this.write((this.midLine ? ' ' : '') + m.content);
      this.midLine = true;
      return;
    }
    if (m.kind === 'end') {
      if (this.midLine) this.write('\n');
      this.midLine = false;
    } else {
      if (this.midLine) this.write('\n');
      this.midLine = false;
      this.write(m.content + '\n');
    }
    if (unprompted) this.showPrompt();
  }

  private write(s: string): void {
    // A message printed over the prompt starts on a fresh line; the prompt is drawn again afterwards.
    if (this.promptShown && s !== '> ') {
      s = '\n' + s;
      this.promptShown = false;
    }
    (this.opts.output ?? process.stdout).write(s);
  }
}
