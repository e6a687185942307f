/**
 * Typed errors of the memory system and knowledge base. Tool handlers throw
 * them; the kernel turns them into tool errors the model can read.
 */
import { HomeAgentError } from '../kernel/errors.js';

/** A tool got arguments it cannot use (missing, wrong type, out of range). Code MEMORY_BAD_ARGS. */
export class MemoryArgumentError extends HomeAgentError {
  constructor(readonly tool: string, message: string) {
    super('MEMORY_BAD_ARGS', `${tool}: ${message}`);
  }
}

/** An entity, relation or document named by a tool does not exist. Code MEMORY_NOT_FOUND. */
export class MemoryNotFoundError extends HomeAgentError {
  constructor(readonly tool: string, message: string) {
    super('MEMORY_NOT_FOUND', `${tool}: ${message}`);
  }
}

/** A knowledge document name is invalid or the document cannot be written. Code KNOWLEDGE_INVALID. */
export class KnowledgeError extends HomeAgentError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('KNOWLEDGE_INVALID', message, options);
  }
}

/**
 * The memory reached its size cap (core.storage.memory_max_mb, issue 18
 * "Nothing grows without bound"): nothing new is remembered until something
 * is forgotten or the cap is raised; nothing already remembered is removed.
 * Code MEMORY_FULL.
 */
export class MemoryFullError extends HomeAgentError {
  constructor(message: string) {
    super('MEMORY_FULL', message);
  }
}
