/** The knowledge base (seed 000 §5): store and tools. */
export { KnowledgeBase, defaultSeedDir, type KnowledgeHit, type KnowledgeOptions } from './store.js';
export { knowledgeTools } from './tools.js';
