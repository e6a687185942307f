/**
 * Memory and knowledge as plugins see them (seed 000 §5, §11
 * Memory().Recall/Commit): recalled items, graph triples and the two APIs.
 * No IO here.
 */

/** One recalled memory item injected into the prompt. */
export interface MemItem {
  id: string;
  kind: 'entity' | 'relation' | 'document' | 'knowledge';
  text: string;
  score: number;
  /** Original time of the remembered event, ms since epoch, when known. */
  time?: number;
}

/** A subject-relation-object fact for the graph memory. */
export interface Triple {
  subject: string;
  relation: string;
  object: string;
  subject_type?: string;
  object_type?: string;
  confidence?: number;
  /** The sentence the fact came from. */
  sentence?: string;
}

/** The memory access plugins get (seed 000 §11 Memory().Recall/Commit). */
export interface MemoryAPI {
  recall(query: string, limit?: number): Promise<MemItem[]>;
  commit(triples: Triple[]): Promise<{ entities: number; relations: number }>;
}

/** The knowledge-base access plugins get (seed 000 §5). */
export interface KnowledgeAPI {
  search(query: string, limit?: number): Promise<Array<{ name: string; score: number; snippet: string }>>;
  create(name: string, content: string): Promise<void>;
  list(): Promise<string[]>;
}

