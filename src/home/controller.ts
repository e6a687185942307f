/**
 * Carrying out device commands: look the entity up, refuse when it is
 * unavailable (never commanded blindly), build the platform's exact messages
 * (commands.ts), and publish them at QoS 1 waiting for the broker's
 * acknowledgement, so every command ends delivered or reported failed. Risk
 * checks and confirmation are the callers' business (tools.ts, intents),
 * through `isRisky`.
 */
import type { Logger } from '../kernel/log-types.js';
import { buildCommands, normaliseAction, type DeviceAction, type MqttCommand } from './commands.js';
import { isRiskyAction } from './confirm.js';
import type { Entity } from './entities.js';
import { HomeError, type HomeErrorCode } from './errors.js';
import { actionPhrase } from './replies.js';
import type { DeviceRegistry } from './registry.js';

/** Publishes one command; resolves on broker acknowledgement (HomeMqttClient.publishCommand). */
export type CommandPublisher = (cmd: MqttCommand, timeoutMs: number) => Promise<void>;

/** Options of HomeController. */
export interface HomeControllerOptions {
  registry: DeviceRegistry;
  publish: CommandPublisher;
  log: Logger;
  /** ms to wait for the broker's acknowledgement (read per command). */
  commandTimeoutMs: () => number;
  /** Device ids/names the settings mark risky. */
  riskyDevices: () => string[];
}

/** What a successful control did. */
export interface ControlResult {
  entity: Entity;
  action: DeviceAction;
  /** The messages published, in order. */
  published: MqttCommand[];
}

/** See module comment. */
export class HomeController {
  constructor(private readonly opts: HomeControllerOptions) {}

  /** The entity for `id`, or HomeError DEVICE_NOT_FOUND. */
  entity(id: string): Entity {
    const e = this.opts.registry.get(id);
    if (!e) throw new HomeError('DEVICE_NOT_FOUND', `no device with id "${id}"`);
    return e;
  }

  /** True when `action` on `entity` needs the user's confirmation. */
  isRisky(entity: Entity, action: DeviceAction): boolean {
    return isRiskyAction(entity, normaliseAction(entity, action.action), this.opts.riskyDevices());
  }

  /**
   * Validate without publishing: throws DEVICE_NOT_FOUND, DEVICE_UNAVAILABLE,
   * UNSUPPORTED_ACTION or BAD_ARGUMENT; returns the messages it would send.
   */
  plan(id: string, action: DeviceAction): { entity: Entity; commands: MqttCommand[] } {
    const entity = this.entity(id);
    const view = this.opts.registry.view(id);
    if (!view || !this.opts.registry.isAvailable(id, true)) throw new HomeError('DEVICE_UNAVAILABLE', `${entity.name} is unavailable right now, so I did not send it anything`);
    return { entity, commands: buildCommands(entity, action, view.state) };
  }

  /**
   * Send `action` to entity `id`. Resolves once the broker acknowledged every
   * message; rejects with HomeError (see `plan`, plus COMMAND_TIMEOUT and
   * COMMAND_FAILED from the publisher). `who` is logged.
   */
  async control(id: string, action: DeviceAction, who: string): Promise<ControlResult> {
    const { entity, commands } = this.plan(id, action);
    const timeout = this.opts.commandTimeoutMs();
    for (const cmd of commands) {
      try {
        await this.opts.publish(cmd, timeout);
      } catch (err) {
        this.opts.log.warn({ who, entity: id, action: normaliseAction(entity, action.action), topic: cmd.topic, err: (err as Error).message }, 'device command failed');
        // The error names the command with its values ("set the Bed Light to 40 percent"), not only its topic.
        if (err instanceof HomeError) throw new HomeError(err.code as HomeErrorCode, `could not ${actionPhrase(entity, normaliseAction(entity, action.action), action, 'en')}: ${err.message}`, { cause: err });
        throw err;
      }
    }
    // The action as the device takes it: "lock the front door" reaches a lock as turn_on, and is logged as lock.
    this.opts.log.info({ who, entity: id, action: normaliseAction(entity, action.action), topics: commands.map((c) => c.topic) }, 'device command sent');
    return { entity, action, published: commands };
  }
}
