/**
 * Maintenance commands (`homeagent <command>`, served on the control
 * socket by src/plugins/control) that plugins register through the plugin
 * API (`PluginSDK.registerCommand`), e.g. the voice plugin's `listen`. Owned
 * by the registering plugin: removed when it stops or fails to start, so a
 * command is only answered while its plugin runs.
 */
import { HomeAgentError } from './errors.js';

/** What a command handler gets besides its arguments. */
export interface CommandIO {
  /** Stream a `data` line to the client (logs, listen progress). */
  send(data: unknown): void;
  /** Aborted when the client disconnects. */
  signal: AbortSignal;
}

/** A command: resolves with the `end` result; throws for an `error` line (a HomeAgentError's code is passed on). */
export type CommandHandler = (args: Record<string, unknown>, io: CommandIO) => Promise<unknown> | unknown;

/** Command names: lower case words joined by `.` or `-` (`listen`, `memory.stats`). */
const NAME = /^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)*$/;

/** The plugins' commands, by name. */
export class CommandRegistry {
  private readonly entries = new Map<string, { owner: string; handler: CommandHandler }>();

  /**
   * Register `name` for plugin `owner`.
   * @throws HomeAgentError COMMAND_NAME for a malformed name, COMMAND_DUPLICATE when another plugin has it.
   */
  register(owner: string, name: string, handler: CommandHandler): void {
    if (!NAME.test(name)) throw new HomeAgentError('COMMAND_NAME', `command name "${name}" is not lower-case words joined by "." or "-"`);
    const had = this.entries.get(name);
    if (had && had.owner !== owner) throw new HomeAgentError('COMMAND_DUPLICATE', `command "${name}" is already registered by plugin "${had.owner}"`);
    this.entries.set(name, { owner, handler });
  }

  /** The handler of `name`, if a running plugin registered it. */
  get(name: string): CommandHandler | undefined {
    return this.entries.get(name)?.handler;
  }

  /** Registered names, sorted. */
  names(): string[] {
    return [...this.entries.keys()].sort();
  }

  /** Remove every command of `owner`; returns their names. */
  removeOwner(owner: string): string[] {
    const gone: string[] = [];
    for (const [name, e] of this.entries) {
      if (e.owner !== owner) continue;
      this.entries.delete(name);
      gone.push(name);
    }
    return gone;
  }
}
