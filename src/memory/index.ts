/**
 * Memory system public API (issue 5): the kernel wires `MemorySystem` as its
 * `KernelMemory`, plugins get `memory.api()` and `memory.knowledge.api()`.
 */
export { MemorySystem, LOOP_SETTINGS, type MemorySystemOptions, type LoopName } from './memory-system.js';
export { recallReading, type RecallHit, type RecallQuery, type RecallRules } from './recall.js';
export { MemoryPlugin, LOOP_NAMES, type MemoryLoops, type MemoryPluginOptions } from './memory-plugin.js';
export { MEMORY_SETTINGS, registerMemorySettings } from './settings.js';
export { MemoryArgumentError, MemoryNotFoundError, KnowledgeError } from './errors.js';
export { ruleTriples, docToTriples } from './distiller.js';
export { textForVector, type ToolMemoryPolicy } from './context-window.js';
export { DEFAULT_RANK_WEIGHTS, type RankWeights } from './documents.js';
export { VECTOR_FINGERPRINT, terms, keywords, nameBigrams, jaccard } from './text.js';
export { KnowledgeBase, knowledgeTools } from '../knowledge/index.js';
