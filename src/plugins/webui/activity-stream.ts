/**
 * The WebUI's live event streams (GET /api/v1/events): the Activity stream
 * (inputs and every turn event, stops, device commands, timers; the last
 * ACTIVITY_BACKLOG of them replayed to a page that opens later) and the
 * Devices stream (device states from MQTT, never kept).
 *
 * Privacy (issue 18): each page reads the Activity stream as its session's
 * person may, by the rule of GET /turns/{id} (turn-privacy.ts): a turn
 * belongs to its speaker; once any of its own words touch a sensitive topic
 * the turn is private, and every other viewer gets its events masked
 * ("[Bob said something private]", "[private]", tool arguments {}), no
 * per-token `llm.delta` at all. A turn found private only part way (the
 * question was plain, a tool result or the answer is not) was already shown
 * in part: the other viewers get a `turn.private` event (`{turn, text}`) and
 * the page masks what it shows of that turn; the backlog replays the whole
 * turn masked. The Devices stream carries device states (what GET /devices
 * shows every session), no conversation, so it is the same for everyone.
 *
 * Cost per page (issue 16: ten pages must stay cheap while the box talks):
 * an event is serialised once as it is, and once masked only when a page
 * that does not own a private turn is open: at most twice, however many
 * pages watch. Nothing is written inside the bus's synchronous publish (a
 * stop's own events must not wait for ten TLS sockets): frames are queued
 * per page and written on the next turn of the event loop, one write per
 * page for all the frames queued meanwhile. Per page the service holds one
 * queue, bounded by SLOW_CLIENT_BYTES: a page that stops reading is dropped.
 */
import type http from 'node:http';
import type { EventMap, EventType } from '../../kernel/events.js';
import type { RunEvent } from '../../kernel/run-log.js';
import type { InputMessage } from '../../kernel/turn-types.js';
import { isSelfInput } from '../../kernel/turn-types.js';
import { UNKNOWN_SPEAKER } from '../../kernel/people.js';
import { isSensitiveText, personKey } from '../../kernel/sensitive.js';
import { eventWords, maskEvent, maskInput, privateInputText } from './turn-privacy.js';
import type { EventStreamName } from './api.js';

/** Activity events kept for a page that opens later. */
export const ACTIVITY_BACKLOG = 500;
/** Bytes waiting for a page before it is dropped (a page that stopped reading must not grow the service). */
export const SLOW_CLIENT_BYTES = 1024 * 1024;
/** Largest serialised activity event (bytes); longer strings in one are cut. */
const MAX_EVENT_BYTES = 32 * 1024;
/** Turns whose privacy is remembered for live events (the backlog's entries hold their own turn's). */
export const TURNS_KEPT = 256;
/** Characters of a reply's end kept to find a sensitive word split across `llm.delta` pieces (longer than any such phrase). */
const DELTA_TAIL = 64;

/** Who a page reads as: the personKey of its session's person, or of the unidentified speaker for an unnamed session. */
export function viewerKey(person: string | undefined): string {
  return personKey(person ?? UNKNOWN_SPEAKER);
}

/** One open stream. */
interface StreamClient {
  res: http.ServerResponse;
  /** Whether it asked for the per-token `llm.delta`. */
  deltas: boolean;
  /** Which stream it reads (activity or devices). */
  stream: EventStreamName;
  /** The session it was opened with (revoking it ends the stream). */
  session: string;
  /** Who it reads as (viewerKey). */
  viewer: string;
  /** Frames waiting for the next flush. */
  queued: string[];
}

/** What the stream knows of one turn's privacy. */
interface TurnState {
  /** Its speaker (turn-privacy.ts turnOwner: the input's person, or the unidentified speaker); null for the box's own turns and turns whose start was not seen. */
  owner: string | null;
  /** personKey(owner); null when nobody owns it. */
  ownerKey: string | null;
  /** Whether any of its own words so far touch a sensitive topic. */
  secret: boolean;
  /** Whether any of its events went out (a turn found private later needs a `turn.private`). */
  sent: boolean;
  /** The end of the reply streamed so far (llm.delta), for a sensitive word split across pieces. */
  tail: string;
}

/** A backlog entry: the event as serialised for its owner, and masked (made on first need). */
interface Kept {
  seq: number;
  /** `{"type","at","payload"}` as it is. */
  json: string;
  /** Its turn's state (shared with the live map), absent for events of no turn. */
  turn?: TurnState;
  /** An event of no turn whose words are sensitive: masked for everyone. */
  ownerless?: boolean;
  /** The masked JSON, made on first need. */
  masked?: string;
}

/** The Activity and Devices streams of one WebUI (see module comment). */
export class EventStreams {
  private readonly clients = new Set<StreamClient>();
  private readonly backlog: Kept[] = [];
  private readonly turns = new Map<string, TurnState>();
  private seq = 0;
  private flushing?: NodeJS.Immediate;

  /** @param now the clock's time (ms since epoch) stamped on each event as `at`. */
  constructor(private readonly now: () => number) {}

  /** Open streams (tests: a page that stopped reading is dropped). */
  get size(): number {
    return this.clients.size;
  }

  /** Activity events kept for a page that opens later (at most ACTIVITY_BACKLOG). */
  get backlogSize(): number {
    return this.backlog.length;
  }

  /** Turns whose privacy is remembered for live events (at most TURNS_KEPT). */
  get turnsTracked(): number {
    return this.turns.size;
  }

  /**
   * Start serving an event stream on `res`: `backlog` replays the kept
   * Activity events (masked as `person` may read them), `deltas` adds the
   * per-token `llm.delta`. `person`: the session's person, undefined for an
   * unnamed session.
   */
  open(req: http.IncomingMessage, res: http.ServerResponse, o: { session: string; person: string | undefined; backlog: boolean; deltas: boolean; stream: EventStreamName }): void {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
    const c: StreamClient = { res, deltas: o.deltas, session: o.session, stream: o.stream, viewer: viewerKey(o.person), queued: [] };
    const replay = ['retry: 2000\n\n'];
    if (o.backlog && o.stream === 'activity') for (const k of this.backlog) replay.push(frame(k.seq, this.keptJson(k, c.viewer)));
    res.write(replay.join(''));
    this.clients.add(c);
    res.on('close', () => this.clients.delete(c));
    req.on('error', () => this.clients.delete(c));
  }

  /** An Activity event from the bus: kept (but `llm.delta`) and queued for every Activity page as its viewer may read it. */
  activity<K extends EventType>(type: K, payload: EventMap[K]): void {
    if (type === 'llm.delta' && !this.anyDeltaReader()) return;
    const p = payload as Record<string, unknown>;
    const at = this.now();
    const seq = ++this.seq;
    const json = eventJson(type, payload, at);
    const id = type === 'raw_input' ? (p.id as string) : typeof p.turn === 'string' ? p.turn : undefined;
    const turn = id !== undefined ? this.turnState(id, type, payload) : undefined;
    const ownerless = !turn && type === 'output' && isSensitiveText(String(p.content ?? ''));
    let hidden = false; // became private with this event, after some of it went out
    if (turn) {
      const words = type === 'llm.delta' ? turn.tail + String(p.text ?? '') : type === 'raw_input' ? String(p.text ?? '') : eventWords(payload as RunEvent);
      if (type === 'llm.delta') turn.tail = words.slice(-DELTA_TAIL);
      if (!turn.secret && isSensitiveText(words)) {
        turn.secret = true;
        hidden = turn.sent;
      }
      turn.sent = true;
    }
    const kept: Kept = { seq, json, ...(turn ? { turn } : {}), ...(ownerless ? { ownerless: true } : {}) };
    if (type !== 'llm.delta') {
      this.backlog.push(kept);
      if (this.backlog.length > ACTIVITY_BACKLOG) this.backlog.shift();
    }
    // After this event: what the other viewers were shown of the turn before it is to be masked.
    const notice = hidden ? frame(++this.seq, JSON.stringify({ type: 'turn.private', at, payload: { turn: id, text: privateInputText(turn!.owner) } })) : undefined;
    for (const c of this.clients) {
      if (c.stream !== 'activity') continue;
      const owns = !this.masks(kept, c.viewer);
      if (!(type === 'llm.delta' && (!c.deltas || !owns))) c.queued.push(owns ? frame(seq, json) : frame(seq, this.keptJson(kept, c.viewer)));
      if (notice && !owns) c.queued.push(notice);
    }
    this.scheduleFlush();
  }

  /** A Devices event: queued for the open Devices pages only, never kept (the page reads GET /devices when it opens). */
  device<K extends EventType>(type: K, payload: EventMap[K]): void {
    let f: string | undefined;
    for (const c of this.clients) {
      if (c.stream !== 'devices') continue;
      c.queued.push((f ??= frame(++this.seq, eventJson(type, payload, this.now()))));
    }
    if (f) this.scheduleFlush();
  }

  /** A comment line to every stream (keeps idle connections open through proxies). */
  keepAlive(): void {
    for (const c of this.clients) c.queued.push(': keep-alive\n\n');
    this.scheduleFlush();
  }

  /** End the streams opened with session `id` (revoked). */
  endSession(id: string): void {
    for (const c of [...this.clients]) {
      if (c.session !== id) continue;
      this.clients.delete(c);
      c.res.end();
    }
  }

  /** End every stream (the WebUI stops). */
  close(): void {
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = undefined;
    for (const c of this.clients) c.res.end();
    this.clients.clear();
  }

  /** Whether `kept` is masked for `viewer`. */
  private masks(kept: Kept, viewer: string): boolean {
    if (kept.ownerless) return true;
    return !!kept.turn?.secret && kept.turn.ownerKey !== viewer;
  }

  /** A kept event's JSON as `viewer` reads it; the masked one made once per event (the same for every viewer but the owner). */
  private keptJson(kept: Kept, viewer: string): string {
    if (!this.masks(kept, viewer)) return kept.json;
    return (kept.masked ??= maskedJson(kept.json, kept.turn?.owner ?? null));
  }

  /** The privacy state of turn `id`, begun by its input (raw_input, turn.started) or, unseen, nobody's. */
  private turnState(id: string, type: string, payload: unknown): TurnState {
    let t = this.turns.get(id);
    const input = type === 'raw_input' ? (payload as InputMessage) : type === 'turn.started' ? (payload as { input: InputMessage }).input : undefined;
    if (!t || (input && !t.sent)) {
      const owner = input && !isSelfInput(input) ? (input.user ?? UNKNOWN_SPEAKER) : null;
      t = { owner, ownerKey: owner === null ? null : personKey(owner), secret: false, sent: false, tail: '' };
      this.turns.set(id, t);
      if (this.turns.size > TURNS_KEPT) this.turns.delete(this.turns.keys().next().value!);
    }
    return t;
  }

  private anyDeltaReader(): boolean {
    for (const c of this.clients) if (c.stream === 'activity' && c.deltas) return true;
    return false;
  }

  private scheduleFlush(): void {
    this.flushing ??= setImmediate(() => this.flush());
  }

  /** Write what is queued: one write per page; a page with SLOW_CLIENT_BYTES unread is dropped (it reconnects when it can). */
  private flush(): void {
    this.flushing = undefined;
    for (const c of this.clients) {
      if (c.queued.length === 0) continue;
      const data = c.queued.length === 1 ? c.queued[0]! : c.queued.join('');
      c.queued = [];
      if (c.res.writableLength > SLOW_CLIENT_BYTES) {
        this.clients.delete(c);
        c.res.destroy();
        continue;
      }
      c.res.write(data);
    }
  }
}

/** One server-sent event. */
function frame(seq: number, json: string): string {
  return `id: ${seq}\ndata: ${json}\n\n`;
}

/** The masked JSON of a kept event (`{"type","at","payload"}`) of `owner`'s private turn (turn-privacy.ts maskEvent; inputs by maskInput). */
function maskedJson(json: string, owner: string | null): string {
  const ev = JSON.parse(json) as { type: string; payload: Record<string, unknown> };
  if (ev.type === 'raw_input') ev.payload = maskInput(ev.payload as unknown as InputMessage, owner) as unknown as Record<string, unknown>;
  else if (ev.type === 'output' && typeof ev.payload.turn !== 'string') ev.payload = { ...ev.payload, content: '[private]' };
  else ev.payload = maskEvent(ev.payload as unknown as RunEvent, owner, true, null) as unknown as Record<string, unknown>;
  return JSON.stringify(ev);
}

/**
 * `{"type","at","payload"}` of one activity event, strings cut so the whole
 * stays under MAX_EVENT_BYTES. An input's images (base64, which no page
 * shows) are left out, their count kept as `images_count`.
 */
export function eventJson(type: string, payload: unknown, at: number): string {
  payload = withoutImages(type, payload);
  const text = JSON.stringify({ type, at, payload });
  if (text.length <= MAX_EVENT_BYTES) return text;
  const cut = (v: unknown): unknown => {
    if (typeof v === 'string') return v.length > 2000 ? `${v.slice(0, 2000)}… (${v.length} characters)` : v;
    if (Array.isArray(v)) return v.slice(0, 50).map(cut);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, cut(x)]));
    return v;
  };
  const shorter = JSON.stringify({ type, at, payload: cut(payload), truncated: true });
  return shorter.length <= MAX_EVENT_BYTES ? shorter : JSON.stringify({ type, at, payload: { turn: (payload as { turn?: unknown }).turn }, truncated: true });
}

/** `payload` without the input images of raw_input / turn.started (their count instead). */
function withoutImages(type: string, payload: unknown): unknown {
  const strip = (input: InputMessage): Omit<InputMessage, 'images'> & { images_count?: number } => {
    const { images, ...rest } = input;
    return { ...rest, images_count: images!.length };
  };
  if (type === 'raw_input' && (payload as InputMessage).images) return strip(payload as InputMessage);
  if (type === 'turn.started') {
    const p = payload as { input: InputMessage };
    if (p.input.images) return { ...p, input: strip(p.input) };
  }
  return payload;
}
