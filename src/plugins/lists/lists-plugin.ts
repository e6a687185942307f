/**
 * The lists plugin: the box's shopping list and to-do list (ListService in
 * `<dataDir>/lists.db`). The local intents (src/home/local-intents.ts) call
 * the same service; the LLM gets one small tool, `list` (action add, remove,
 * done to tick a to-do off, items to read the open ones; one tool, not four,
 * because every turn offers it: issue 19), and every
 * change is published as `plugin.lists.changed` (for `homeagent listen` /
 * `logs`, and a WebUI later).
 */
import path from 'node:path';
import type { Plugin, PluginSDK } from '../../kernel/sdk.js';
import { defineTool } from '../../kernel/tool-schema.js';
import { systemClock, type Clock } from '../../kernel/clock.js';
import { LIST_NAMES, ListError, ListService } from './list-service.js';

/** Constructor options of ListsPlugin. */
export interface ListsPluginOptions {
  /** Clock (tests pass a FakeClock). Default: the system clock. */
  clock?: Clock;
  /** SQLite path; default `<dataDir>/lists.db`. */
  dbPath?: string;
}

const LIST_PARAM = { type: 'string', enum: LIST_NAMES } as const;
/** What the list tool does: add an item, remove it, tick it off (done), or read the open items. */
const LIST_ACTIONS = ['add', 'remove', 'done', 'items'] as const;

/** See module comment. */
export class ListsPlugin implements Plugin {
  readonly name = 'lists';
  private svc: ListService | undefined;

  constructor(private readonly opts: ListsPluginOptions = {}) {}

  /** The running service (local intents and a WebUI call it); undefined before start(). */
  get service(): ListService | undefined {
    return this.svc;
  }

  start(sdk: PluginSDK): void {
    const svc = new ListService({
      dbPath: this.opts.dbPath ?? path.join(sdk.dataDir, 'lists.db'),
      dataDir: sdk.dataDir,
      clock: this.opts.clock ?? systemClock,
      onChange: (change, item) => sdk.publish('plugin.lists.changed', { change, list: item.list, id: item.id, text: item.text }),
    });
    svc.start();
    this.svc = svc;
    sdk.registerTool(defineTool({
      name: 'list',
      description: 'Shopping or to-do list: done ticks an item off, items reads the open ones. Example: {"action":"add","list":"shopping","item":"milk"}',
      parameters: {
        type: 'object',
        properties: { action: { type: 'string', enum: LIST_ACTIONS }, list: LIST_PARAM, item: { type: 'string', minLength: 1, maxLength: 200 } },
        required: ['action', 'list'],
        additionalProperties: false,
      },
      handler: (args) => {
        if (args.action === 'items') return { list: args.list, items: svc.items(args.list).map((i) => i.text) };
        if (args.item === undefined) throw new ListError(`${args.action} needs an item`);
        if (args.action === 'add') {
          const r = svc.add(args.list, args.item);
          return { added: r.added, already_there: !r.added, item: r.item.text };
        }
        const it = args.action === 'done' ? svc.complete(args.list, { text: args.item }) : svc.remove(args.list, { text: args.item });
        return it ? { changed: true, item: it.text, done: it.done } : { changed: false, reason: `"${args.item}" is not on the ${args.list} list` };
      },
    }));
  }

  stop(): void {
    this.svc?.stop();
    this.svc = undefined;
  }
}
