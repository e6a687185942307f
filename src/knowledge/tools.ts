/**
 * Knowledge tools for the model (seed 000 §5 工具入口): knowledge_search,
 * knowledge_create, knowledge_list.
 */
import type { ToolDef } from '../kernel/stage-types.js';
import { optInt, reqString } from '../memory/args.js';
import type { KnowledgeBase } from './store.js';

/** The three knowledge tools over `kb`. Bad arguments throw MemoryArgumentError / KnowledgeError. */
export function knowledgeTools(kb: KnowledgeBase): ToolDef[] {
  return [
    {
      name: 'knowledge_search',
      description: 'Search the knowledge base (manuals, notes the household added). Returns the best passages with their document names.',
      parameters: {
        type: 'object',
        properties: { query: { type: 'string', description: 'What to look for' }, limit: { type: 'integer', minimum: 1, maximum: 20 } },
        required: ['query'],
      },
      handler: (args) => {
        const query = reqString('knowledge_search', args, 'query', 2000);
        const hits = kb.search(query, optInt('knowledge_search', args, 'limit', 1, 20, 3));
        return hits.length === 0 ? 'No knowledge matches.' : hits.map((h) => ({ name: h.name, score: Number(h.score.toFixed(3)), snippet: h.snippet }));
      },
    },
    {
      name: 'knowledge_create',
      description: 'Add or replace a knowledge document (markdown) under a short name.',
      parameters: {
        type: 'object',
        properties: { name: { type: 'string', description: 'Short name: letters, digits, _ - . or spaces' }, content: { type: 'string', description: 'Markdown content' } },
        required: ['name', 'content'],
      },
      handler: (args) => {
        const name = reqString('knowledge_create', args, 'name', 64);
        const content = reqString('knowledge_create', args, 'content', 200000);
        kb.create(name, content);
        return `Stored knowledge "${name}" (${content.length} characters).`;
      },
    },
    {
      name: 'knowledge_list',
      description: 'List the names of all knowledge documents.',
      parameters: { type: 'object', properties: {} },
      handler: () => kb.list(),
    },
  ];
}
