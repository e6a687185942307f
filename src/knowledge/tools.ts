/**
 * Knowledge tools for the model (seed 000 §5 工具入口): knowledge_search,
 * knowledge_create, knowledge_list. Argument types come from each tool's
 * JSON Schema (defineTool, "schemas once"); ajv in the tool registry refuses
 * bad arguments before a handler runs.
 */
import type { ToolDef } from '../kernel/stage-types.js';
import { defineTool } from '../kernel/tool-schema.js';
import { optInt, text } from '../memory/args.js';
import type { KnowledgeBase } from './store.js';

/** The three knowledge tools over `kb`. A name the store refuses (path characters) throws KnowledgeError. */
export function knowledgeTools(kb: KnowledgeBase): ToolDef[] {
  return [
    defineTool({
      name: 'knowledge_search',
      description: 'Search the knowledge base (manuals, household notes); returns passages. Example: {"query":"descale the coffee machine"}',
      group: 'knowledge',
      parameters: {
        type: 'object',
        properties: { query: text(2000), limit: optInt(1, 20) },
        required: ['query'],
      },
      handler: (args) => {
        const hits = kb.search(args.query.trim(), args.limit ?? 3);
        return hits.length === 0 ? 'No knowledge matches.' : hits.map((h) => ({ name: h.name, score: Number(h.score.toFixed(3)), snippet: h.snippet }));
      },
    }),
    defineTool({
      name: 'knowledge_create',
      description: 'Add or replace a knowledge document (markdown) under a short name. Example: {"name":"bins","content":"Recycling goes out on Mondays."}',
      group: 'knowledge',
      parameters: {
        type: 'object',
        properties: { name: text(64, 'Short name: letters, digits, _ - . or spaces'), content: text(200000, 'Markdown content') },
        required: ['name', 'content'],
      },
      handler: (args) => {
        const name = args.name.trim();
        const content = args.content.trim();
        kb.create(name, content);
        return `Stored knowledge "${name}" (${content.length} characters).`;
      },
    }),
    defineTool({
      name: 'knowledge_list',
      description: 'List the knowledge documents. Example: {}',
      group: 'knowledge',
      parameters: { type: 'object', properties: {} },
      handler: () => kb.list(),
    }),
  ];
}
