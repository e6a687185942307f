/**
 * ALSA presence probes for 'auto' driver selection: is there a sound card with
 * a playback (or capture) device? Reads /proc/asound (root injectable).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Probe } from './mode.js';
import { which } from './which.js';

/** Probe for an ALSA card with a PCM device of `direction` ('p' playback, 'c' capture) under `<procRoot>/asound`, and the `binary` on PATH. */
export function probeAlsa(direction: 'p' | 'c', binary: string, procRoot = '/proc'): Probe {
  if (!which(binary)) return { present: false, reason: `${binary} is not installed` };
  const dir = path.join(procRoot, 'asound');
  let cards = '';
  try {
    cards = readFileSync(path.join(dir, 'cards'), 'utf8');
  } catch {
    return { present: false, reason: `${dir}/cards is missing (no ALSA sound support)` };
  }
  const names = cards
    .split('\n')
    .map((l) => /^\s*(\d+)\s+\[([^\]]+)\]/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null);
  for (const m of names) {
    let entries: string[] = [];
    try {
      entries = readdirSync(path.join(dir, `card${m[1]}`));
    } catch {
      continue;
    }
    if (entries.some((e) => new RegExp(`^pcm\\d+${direction}$`).test(e))) {
      return { present: true, detail: `card ${m[1]} (${m[2]!.trim()})` };
    }
  }
  return { present: false, reason: `no sound card with a ${direction === 'p' ? 'playback' : 'capture'} device` };
}
