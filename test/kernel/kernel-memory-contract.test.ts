/** The kernel memory contract (test/kernel/contracts/kernel-memory.ts) against the memory system and SimpleContextStore. */
import { SimpleContextStore } from '../../src/kernel/memory-port.js';
import { makeMemory, tempDir } from '../memory/helpers.js';
import { kernelMemoryContract } from './contracts/kernel-memory.js';

kernelMemoryContract('SimpleContextStore', () => ({ memory: new SimpleContextStore(), cleanup: () => {} }));

kernelMemoryContract('MemorySystem (src/memory, SQLite)', () => {
  const { dir, cleanup } = tempDir('ha-kmem-contract-');
  const clock = { now: () => Date.UTC(2026, 10, 30, 13, 0, 0) };
  return { memory: makeMemory({ dir, clock }), reopen: () => makeMemory({ dir, clock }), cleanup };
});
