/**
 * The lists plugin: the box's shopping list and to-do list (ListService in
 * `<dataDir>/lists.db`). The local intents (src/home/local-intents.ts) call
 * the same service; the LLM gets three small tools (list_add, list_remove,
 * list_items; completing a to-do is list_remove with done: true), and every
 * change is published as `plugin.lists.changed` (for `homeagent listen` /
 * `logs`, and a WebUI later).
 */
import path from 'node:path';
import type { Plugin, PluginSDK } from '../../kernel/sdk.js';
import { defineTool } from '../../kernel/tool-schema.js';
import { systemClock, type Clock } from '../../kernel/clock.js';
import { LIST_NAMES, ListService } from './list-service.js';

/** Constructor options of ListsPlugin. */
export interface ListsPluginOptions {
  /** Clock (tests pass a FakeClock). Default: the system clock. */
  clock?: Clock;
  /** SQLite path; default `<dataDir>/lists.db`. */
  dbPath?: string;
}

const LIST_PARAM = { type: 'string', enum: LIST_NAMES, description: 'shopping or todo.' } as const;

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
      name: 'list_add',
      description: 'Add an item to the shopping or to-do list. Example: {"list":"shopping","item":"milk"}',
      parameters: {
        type: 'object',
        properties: { list: LIST_PARAM, item: { type: 'string', minLength: 1, maxLength: 200 } },
        required: ['list', 'item'],
        additionalProperties: false,
      },
      handler: (args) => {
        const r = svc.add(args.list, args.item);
        return { added: r.added, already_there: !r.added, item: r.item.text };
      },
    }));
    sdk.registerTool(defineTool({
      name: 'list_remove',
      description: 'Remove an item from a list, or tick it off with done: true. Example: {"list":"todo","item":"call mum","done":true}',
      parameters: {
        type: 'object',
        properties: { list: LIST_PARAM, item: { type: 'string', minLength: 1 }, done: { type: 'boolean' } },
        required: ['list', 'item'],
        additionalProperties: false,
      },
      handler: (args) => {
        const it = args.done === true ? svc.complete(args.list, { text: args.item }) : svc.remove(args.list, { text: args.item });
        return it ? { changed: true, item: it.text, done: it.done } : { changed: false, reason: `"${args.item}" is not on the ${args.list} list` };
      },
    }));
    sdk.registerTool(defineTool({
      name: 'list_items',
      description: 'The open items of the shopping or to-do list. Example: {"list":"shopping"}',
      parameters: { type: 'object', properties: { list: LIST_PARAM }, required: ['list'], additionalProperties: false },
      handler: (args) => ({ list: args.list, items: svc.items(args.list).map((i) => i.text) }),
    }));
  }

  stop(): void {
    this.svc?.stop();
    this.svc = undefined;
  }
}
