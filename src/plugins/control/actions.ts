/**
 * What the box did, as `homeagent listen` and `homeagent ask` list it: the
 * device commands it sent (MQTT, acknowledged by the broker), the timers it
 * started, cancelled or changed, and the list items it added, removed or
 * completed, each one line ("mqtt home/kitchen/light/set ON", "timer pasta
 * started: 10 minutes", "shopping list added: milk"). Tools the model called
 * are listed from the turn's result, not here.
 */
import type { PluginSDK } from '../../kernel/sdk.js';
import { formatDuration } from '../timers/timer-service.js';

/** A running watch: `actions` grows while it runs; off() ends it. */
export interface ActionWatch {
  readonly actions: string[];
  off(): void;
}

/**
 * Watch the bus for actions. `counts()` says whether an action seen now
 * belongs to what is watched (e.g. the turn of one input is running);
 * default: every action.
 */
export function watchActions(sdk: Pick<PluginSDK, 'subscribe'>, counts: () => boolean = () => true): ActionWatch {
  const actions: string[] = [];
  const add = (line: string): void => {
    if (counts()) actions.push(line);
  };
  const offs = [
    sdk.subscribe('plugin.home.command', (c) => add(`mqtt ${c.topic} ${c.payload}`)),
    sdk.subscribe('plugin.timers.changed', (c) => add(`timer${c.name ? ` ${c.name}` : ''} ${c.change}: ${formatDuration(c.seconds, 'en')}`)),
    sdk.subscribe('plugin.lists.changed', (c) => add(`${c.list} list ${c.change}: ${c.text}`)),
  ];
  return { actions, off: () => offs.forEach((off) => off()) };
}
