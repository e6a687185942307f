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
  /** Health, money, passwords, where the key is hidden: not told to other speakers than `owner` (issue 18). */
  sensitive?: boolean;
  /** The person the fact belongs to (default: the subject). */
  owner?: string;
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


/**
 * One fact about a person (a graph relation, seed 001 "Social" over the
 * graph): `subject relation object`, with the sentence it came from.
 * Times are ms since epoch.
 */
export interface PersonFact {
  id: number;
  subject: string;
  relation: string;
  object: string;
  /** Health, money, secrets, the hidden key: shown only to `owner` (issue 18). */
  sensitive: boolean;
  /** The person the fact belongs to. */
  owner: string;
  sentence?: string;
  updated: number;
}

/** A person of the household as the social API shows them. */
export interface PersonView {
  name: string;
  /** Other names the person is known by (left by merges and renames). */
  aliases: string[];
  /** When the person was first / last heard speaking (ms since epoch); absent for people never identified speaking. */
  first_seen?: number;
  last_seen?: number;
  /** Traits set with set_trait: trait name -> value. */
  traits: Record<string, string>;
  /** Everything else known about the person: what they said about themselves, what others said, relations to other people. */
  facts: PersonFact[];
}

/** One entry of the household's list of people. */
export interface PersonSummary {
  name: string;
  first_seen: number;
  last_seen: number;
  /** How many facts are stored about the person. */
  facts: number;
}

/**
 * The social API, reading half (seed 001 "Restricted External Plugin API":
 * GetPerson / GetTrait / GetRelations / GetNetwork / ListPersons). A plugin
 * reads as nobody in particular: sensitive facts are left out.
 */
export interface SocialReadAPI {
  /** The household's people, most recently heard first. */
  listPersons(): Promise<PersonSummary[]>;
  /** A person by name or alias; undefined when unknown. */
  getPerson(name: string): Promise<PersonView | undefined>;
  /** One trait's value; undefined when unset or the person is unknown. */
  getTrait(name: string, trait: string): Promise<string | undefined>;
  /** The person's facts and relations. Unknown person: []. */
  getRelations(name: string): Promise<PersonFact[]>;
  /** People reachable from `name` through relations between people, up to `depth` steps (default 2), and those relations. */
  getNetwork(name: string, depth?: number): Promise<{ people: string[]; relations: PersonFact[] }>;
}

/**
 * The whole social API (built-in plugins; seed 001: "Full PluginSDK
 * (SocialAPI read/write)"). Writes make the named entities persons; the
 * household's list holds the people identified speaking.
 * Errors: a TypeError naming the bad argument (empty or too long names).
 */
export interface SocialAPI extends SocialReadAPI {
  /** Set a trait (one value per trait: a new value replaces the old). `sensitive` defaults to what the words say (src/memory/sensitive.ts). */
  setTrait(name: string, trait: string, value: string, opts?: { sensitive?: boolean }): Promise<void>;
  /** Record that `name` `relation` `other` (e.g. Anna sister_of Ben); `other` becomes a person. */
  relate(name: string, relation: string, other: string, opts?: { sensitive?: boolean }): Promise<void>;
}
