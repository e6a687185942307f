/**
 * The pictures' tools for the model (issue 18 "Pictures"), group `camera`:
 * - `pictures_recall {when?, camera?, limit?}`: what the camera saw (and the
 *   images people showed the box) in a time range said in words ("this
 *   morning", "yesterday", "on May 3, 2026"; src/memory/time-query.ts), as
 *   times, sources and descriptions, newest first. Parts of a day are the
 *   household's local hours (plugin.home.time_zone, else the system zone).
 * - `picture_show {id}`: a remembered picture itself, verified on read (a
 *   damaged file is an error, PICTURE_DAMAGED, never sent).
 */
import type { SettingsAPI } from '../kernel/settings-types.js';
import type { ToolDef, ToolOutput } from '../kernel/stage-types.js';
import { defineTool } from '../kernel/tool-schema.js';
import { optInt, optText } from './args.js';
import { MemoryNotFoundError } from './errors.js';
import type { PictureEntry, PictureStore } from './pictures.js';
import { queryTimeRange, zoneOffsetMs, type TimeRange } from './time-query.js';

/** Words that ask about the camera or pictures (the prompt's recall adds the pictures of the range they name). */
export const PICTURE_WORDS = /\b(?:camera|cameras|picture|pictures|photo|photos|snapshot|snapshots|image|images|see|saw|seen)\b|摄像头|相机|照片|图片|拍/i;

/** The household's time zone offset at `at` (ms): plugin.home.time_zone when set, else the system zone. */
export function householdOffsetMs(settings: SettingsAPI, at: number): number {
  let zone: unknown;
  try {
    zone = settings.get<unknown>('plugin.home.time_zone');
  } catch {
    zone = undefined;
  }
  return zoneOffsetMs(typeof zone === 'string' ? zone : undefined, at);
}

/** The range `when` names, or today so far when it names none (`said` false then). */
export function pictureRange(when: string | undefined, now: number, offsetMs: number): { range: TimeRange; said: boolean } {
  const r = when ? queryTimeRange(when, now, offsetMs) : undefined;
  if (r) return { range: r, said: true };
  return { range: { from: now - 24 * 3_600_000, to: now + 1 }, said: false };
}

/** One entry as the model reads it: id, ISO time, source, description and who described it. */
export function entryView(e: PictureEntry): Record<string, unknown> {
  return { id: e.id, time: new Date(e.time).toISOString(), source: e.source, description: e.description, described_by: e.described_by };
}

/** The tools over `pictures`; `now` ms since epoch. */
export function pictureTools(pictures: PictureStore, settings: SettingsAPI, now: () => number): ToolDef[] {
  return [
    defineTool({
      name: 'pictures_recall',
      description: 'What the camera saw, and pictures shown to you, in a time range: times and descriptions. Example: {"when":"this morning"}',
      group: 'camera',
      parameters: {
        type: 'object',
        properties: { when: optText(200, 'A time in words: "this morning", "yesterday", "last night"; default: the last 24 hours'), camera: optText(100), limit: optInt(1, 50) },
      },
      handler: (args) => {
        const t = now();
        const { range, said } = pictureRange(args.when?.trim(), t, householdOffsetMs(settings, t));
        const to = Math.min(range.to, t + 1);
        const found = pictures.entriesBetween(range.from, to, args.limit ?? 10, args.camera ?? undefined);
        return {
          from: new Date(range.from).toISOString(),
          to: new Date(to).toISOString(),
          ...(said ? {} : { note: args.when ? `"${args.when}" names no time I understand; these are the last 24 hours` : 'the last 24 hours' }),
          pictures: found.map(entryView),
          ...(found.length === 0 ? { none: 'no picture was taken or shown in that time' } : {}),
        };
      },
    }),
    defineTool({
      name: 'picture_show',
      description: 'Look at a remembered picture again (an id from pictures_recall). Example: {"id":12}',
      group: 'camera',
      parameters: { type: 'object', properties: { id: { type: 'integer', minimum: 1 } }, required: ['id'] },
      handler: (args): ToolOutput => {
        const e = pictures.entry(args.id);
        if (!e) throw new MemoryNotFoundError('picture_show', `no picture ${args.id} (removed under the size budget, forgotten, or never taken)`);
        // Verified on read: PictureDamagedError / PictureNotFoundError reach the model as the tool's error.
        const bytes = pictures.read(e.sha256);
        return { kind: 'tool_output', text: JSON.stringify(entryView(e)), images: [bytes.toString('base64')] };
      },
    }),
  ];
}
