/**
 * Wires the three-layer memory (src/memory) into the service: the kernel's
 * KernelMemory, the plugins' MemoryAPI and KnowledgeAPI, the plugin that runs
 * the heartbeat loops under the plugin host's guard (MemoryPlugin), the
 * plugin that remembers the pictures the model looks at (PicturesPlugin), and the
 * maintenance commands `memory stats` / `memory recall` / `memory export`.
 */
import path from 'node:path';
import type { EmbeddingSource } from '../memory/dense.js';
import type { KernelMemory } from '../kernel/memory-port.js';
import type { Logger } from '../kernel/log-types.js';
import type { KnowledgeAPI, MemItem, MemoryAPI, SocialAPI } from '../kernel/memory-types.js';
import type { PersonExport } from '../memory/memory-system.js';
import type { SettingsAPI } from '../kernel/settings-types.js';
import { createLogger } from '../kernel/log.js';
import { INSTALL_ROOT } from '../kernel/kernel.js';
import { MemoryPlugin, MemorySystem } from '../memory/index.js';
import { PicturesPlugin } from '../memory/pictures-plugin.js';

/** What the service holds of the memory. */
export interface MemoryWiring {
  system: MemorySystem;
  kernelMemory: KernelMemory;
  memoryApi: () => MemoryAPI;
  knowledgeApi: () => KnowledgeAPI;
  /** The household's people for plugins (PluginSDK.social / socialWrite). */
  socialApi: () => SocialAPI;
  /** The heartbeat loops as a plugin: add it to the kernel with the other built-in plugins. */
  plugin: MemoryPlugin;
  /** Remembers the pictures the model looks at and keeps their size budget (issue 18 "Pictures"): add it with the others. */
  picturesPlugin: PicturesPlugin;
  stats(): Record<string, unknown>;
  recall(query: string): Promise<MemItem[]>;
  /** `memory export --person NAME`: everything stored about a person (MemorySystem.exportPerson; MEMORY_NOT_FOUND when unknown). */
  exportPerson(name: string): PersonExport;
}

/** Open the memory in `dataDir`. */
export async function buildMemory(opts: { dataDir: string; settings: SettingsAPI; log: Logger; enqueueConsolidation: (text: string) => void; embedder?: () => EmbeddingSource | undefined }): Promise<MemoryWiring> {
  const system = new MemorySystem({
    dataDir: opts.dataDir,
    settings: opts.settings,
    log: createLogger('memory'),
    enqueueConsolidation: opts.enqueueConsolidation,
    knowledgeSeedDir: path.join(INSTALL_ROOT, 'data', 'knowledge'),
    jiebaCacheDir: path.join(opts.dataDir, 'cache', 'jieba'),
    ...(opts.embedder ? { embedder: opts.embedder } : {}),
  });
  return {
    system,
    kernelMemory: system,
    memoryApi: () => system.api(),
    knowledgeApi: () => system.knowledge.api(),
    socialApi: () => system.socialApi(),
    plugin: new MemoryPlugin({ loops: system }),
    picturesPlugin: new PicturesPlugin({ pictures: system.pictures }),
    stats: () => system.introspect(),
    recall: (q) => system.api().recall(q, 10),
    exportPerson: (name) => system.exportPerson(name),
  };
}
