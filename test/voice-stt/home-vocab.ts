/**
 * Test helper: a Vocabulary read from the fixture home
 * (../shared/fixtures/home/home.json) by parsing its Home Assistant discovery
 * payloads (name or device name, dev.sa as the room, component from the
 * topic). The product builds its registry from MQTT (src/home); this helper
 * only exists so the STT tests can fill the grammar with the same home.
 * A device announced twice (zigbee2mqtt list + HA discovery) is one entity:
 * only discovery config topics are read, keyed by unique_id.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Vocabulary, VocabEntity } from '../../src/intents/types.js';

/** Repository root (two levels above this file). */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The fixture recordings. */
export const voiceDir = path.resolve(repoRoot, '../shared/fixtures/voice/en');
/** The fixture home. */
export const homeFile = path.resolve(repoRoot, '../shared/fixtures/home/home.json');

interface Retained {
  topic: string;
  payload: unknown;
}

function obj(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** Vocabulary of the fixture home. */
export function fixtureVocabulary(): Vocabulary {
  const doc = obj(JSON.parse(readFileSync(homeFile, 'utf8')));
  const retained = (doc?.retained ?? []) as Retained[];
  const byId = new Map<string, VocabEntity>();
  for (const r of retained) {
    const m = /^homeassistant\/([^/]+)\/(?:[^/]+\/)?([^/]+)\/config$/.exec(r.topic);
    const p = obj(r.payload);
    if (!m || !p) continue;
    const dev = obj(p.dev ?? p.device);
    const name = typeof p.name === 'string' ? p.name : typeof dev?.name === 'string' ? dev.name : undefined;
    if (!name) continue;
    const id = String(p.uniq_id ?? p.unique_id ?? `${m[1]}_${m[2]}`);
    const area = typeof dev?.sa === 'string' ? dev.sa : typeof dev?.suggested_area === 'string' ? dev.suggested_area : undefined;
    const dc = p.dev_cla ?? p.device_class;
    byId.set(id, { id, name, domain: m[1]!, ...(area ? { area } : {}), ...(typeof dc === 'string' ? { device_class: dc } : {}) });
  }
  const areas = Array.isArray(doc?.areas) ? (doc.areas as string[]) : [];
  for (const e of byId.values()) if (e.area && !areas.includes(e.area)) areas.push(e.area);
  return { entities: [...byId.values()], areas };
}
