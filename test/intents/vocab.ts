/** A small hand-written home for the intent tests (English and Chinese names). */
import type { Vocabulary } from '../../src/intents/types.js';

/** Vocabulary with lights, a lock, covers, a thermostat, a sensor, scenes and lists. */
export const VOCAB: Vocabulary = {
  entities: [
    { id: 'l1', name: 'Kitchen Light', domain: 'light', area: 'Kitchen' },
    { id: 'l2', name: 'Reading Lamp', domain: 'light', area: 'Study', aliases: ['Book Light'] },
    { id: 'l3', name: 'upstairs/hall lamp', domain: 'light', area: 'Hallway' },
    { id: 'l4', name: '卧室灯', domain: 'light', area: 'Bedroom' },
    { id: 'l5', name: 'Ceiling', domain: 'light', area: 'Bedroom' },
    { id: 's1', name: 'Coffee Maker', domain: 'switch', area: 'Kitchen' },
    { id: 'k1', name: 'Back Door', domain: 'lock' },
    { id: 'k2', name: '前门', domain: 'lock' },
    { id: 'c1', name: 'Garage', domain: 'cover', device_class: 'garage' },
    { id: 't1', name: 'Nest', domain: 'climate', area: 'Hallway' },
    { id: 't2', name: 'Attic Temperature', domain: 'sensor', device_class: 'temperature' },
    { id: 'sc1', name: 'Movie Night', domain: 'scene' },
    { id: 'b1', name: 'Doorbell Chime', domain: 'button' },
    { id: 'm1', name: 'Speaker', domain: 'media_player', area: 'Kitchen' },
  ],
  areas: ['Kitchen', 'Study', 'Hallway', 'Bedroom', 'Living Room'],
  lists: ['Hardware Store'],
};
