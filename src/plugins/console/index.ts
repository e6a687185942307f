/**
 * Text console plugin: talk to the box in a terminal with no audio hardware.
 * Lines typed on `input` become inputs on the `console` channel; replies are
 * printed to `output` as they stream (Cap.Stream: sentence by sentence).
 * `/stop` is the stop button; `/quit` asks the service to shut down.
 */
import readline from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { OutputMessage } from '../../kernel/output-types.js';
import type { Plugin, PluginSDK } from '../../kernel/sdk.js';
import { Cap } from '../../kernel/output-types.js';

/** Options of the console plugin. */
export interface ConsoleOptions {
  input?: Readable;
  output?: Writable;
  /** Called on /quit (the service shuts down). */
  onQuit?: () => void;
  /** Show a "> " prompt (interactive terminals). */
  prompt?: boolean;
}

/** The console plugin. Kernel-level: its /stop is the user's stop. */
export class ConsolePlugin implements Plugin {
  readonly name = 'console';
  readonly kernelLevel = true;
  private rl?: readline.Interface;
  private sdk?: PluginSDK;
  private midLine = false;
  private readonly inFlight = new Set<Promise<unknown>>();
  private quitting = false;

  constructor(private readonly opts: ConsoleOptions = {}) {}

  start(sdk: PluginSDK): void {
    this.sdk = sdk;
    const out = this.opts.output ?? process.stdout;
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
    if (this.opts.prompt) out.write('> ');
  }

  stop(): void {
    const rl = this.rl;
    this.rl = undefined;
    rl?.close();
  }

  private onLine(raw: string): void {
    const line = raw.trim();
    const sdk = this.sdk;
    if (!sdk || !line) return;
    if (line === '/stop') {
      sdk.stop('console');
      return;
    }
    if (line === '/help' || line === '/?') {
      this.write('Type a message to talk to the box. /stop is the stop button, /quit (or Ctrl-D) shuts the service down. Maintenance: homeagent status|logs|config|devices|doctor in another terminal.\n');
      return;
    }
    if (/^\/[a-z]+$/i.test(line) && line !== '/quit' && line !== '/exit') {
      this.write(`unknown console command ${line}; /help lists them\n`);
      return;
    }
    if (line === '/quit' || line === '/exit') {
      // Let what was typed before /quit finish (piped scripts), then quit.
      this.quitting = true;
      void Promise.allSettled([...this.inFlight]).then(() => this.opts.onQuit?.());
      return;
    }
    const p = sdk.injectInput('console', line, { user: 'console' }).then((r) => {
      if (r.status === 'error' && !r.reply) this.write(`(error: ${r.error ?? 'unknown'})\n`);
      if (this.opts.prompt) this.write('> ');
    });
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private print(m: OutputMessage): void {
    if (m.kind === 'sentence') {
      this.write((this.midLine ? ' ' : '') + m.content);
      this.midLine = true;
    } else if (m.kind === 'end') {
      if (this.midLine) this.write('\n');
      this.midLine = false;
    } else {
      if (this.midLine) this.write('\n');
      this.midLine = false;
      this.write(m.content + '\n');
    }
  }

  private write(s: string): void {
    (this.opts.output ?? process.stdout).write(s);
  }
}
