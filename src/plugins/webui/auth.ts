/**
 * Who may use the WebUI (issue 16 "Access"): one-time links made on the box
 * (`homeagent webui link [--person NAME]`), the sessions they open, and the
 * rate limit on opening them.
 *
 * - A link's token is 32 random bytes (base64url); opening it once makes a
 *   session and the link is gone. Unused links end after
 *   plugin.webui.link_ttl_s.
 * - A session's token is another 32 random bytes: the browser's cookie
 *   (Secure, HttpOnly, SameSite=Strict), or a script's
 *   `Authorization: Bearer` token (the same token works for both). A session
 *   not used for plugin.webui.session_days ends.
 * - A link made for a person records that person on the session: what is
 *   typed on that browser is that person speaking.
 * - Only SHA-256 hashes of tokens are kept, in the versioned JSON store
 *   `<data dir>/webui/sessions.json` (store `webui-sessions`, src/kernel/store-version.ts),
 *   so a copy of the data directory opens no session.
 */
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Clock } from '../../kernel/clock.js';
import { HomeAgentError } from '../../kernel/errors.js';
import { normalisePersonName, validatePersonName } from '../../kernel/people.js';
import { encodeVersionedJson, readTextIfExists, readVersionedJson, type JsonStoreSpec } from '../../kernel/store-version.js';
import { writeFileAtomic } from '../../home/store.js';

/** The sessions store: version 1 is `{"schema_version":1,"auth":{"links":[...],"sessions":[...]}}`. */
export const WEBUI_SESSIONS_STORE: JsonStoreSpec = {
  store: 'webui-sessions',
  version: 1,
  key: 'auth',
  migrations: [{ to: 1, description: 'the first WebUI sessions store', up: (p) => p ?? { links: [], sessions: [] } }],
};

/** A pending one-time link. */
export interface LinkRecord {
  id: string;
  token_sha256: string;
  person?: string;
  created_at: number;
  expires_at: number;
}

/** An open session: a browser (`browser`, opened from a page) or a script holding a bearer token (`token`). */
export interface SessionRecord {
  id: string;
  kind: 'browser' | 'token';
  token_sha256: string;
  person?: string;
  created_at: number;
  last_seen_at: number;
  /** What opened it (the browser's User-Agent, shortened). */
  label?: string;
}

/** A row of `webui sessions` (no hashes): a pending link or an open session, times in ms since the epoch. */
export interface AccessEntry {
  id: string;
  kind: 'link' | 'browser' | 'token';
  person?: string;
  created_at: number;
  /** Sessions: last use. */
  last_seen_at?: number;
  /** When it ends unless used (links: when it can no longer be opened). */
  expires_at: number;
  label?: string;
}

/**
 * A person's name on a link, checked and written as everywhere else
 * (src/kernel/people.ts validatePersonName / normalisePersonName: "anna" is
 * "Anna"). Throws HomeAgentError BAD_ARGUMENT naming what is wrong.
 */
export function checkPersonName(name: string): string {
  try {
    return normalisePersonName(validatePersonName(name, 'person name'));
  } catch (err) {
    throw new HomeAgentError('BAD_ARGUMENT', err instanceof Error ? err.message : String(err));
  }
}

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');
const newToken = (): string => randomBytes(32).toString('base64url');
const newId = (): string => randomBytes(4).toString('hex');

/** The links and sessions, persisted on every change (see module comment). */
export class AuthStore {
  private links: LinkRecord[] = [];
  private sessions: SessionRecord[] = [];
  private readonly file: string;
  /** last_seen_at changes are written at most this often per session (ms). */
  private static readonly SEEN_WRITE_MS = 60_000;

  /**
   * Open (or create) the store in `dir`. `sessionTtlMs()` is read at each use
   * (a settings change applies at once). Throws StoreTooNewError /
   * StoreMigrationError (store-version.ts) or SyntaxError for a damaged file.
   */
  constructor(
    dir: string,
    private readonly clock: Clock,
    private readonly sessionTtlMs: () => number,
    dataDir?: string,
  ) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.file = path.join(dir, 'sessions.json');
    const r = readVersionedJson(readTextIfExists(this.file), WEBUI_SESSIONS_STORE, { file: this.file, ...(dataDir ? { dataDir } : {}) });
    if (r.rewrite !== undefined) writeFileAtomic(this.file, r.rewrite);
    const p = (r.payload ?? {}) as { links?: LinkRecord[]; sessions?: SessionRecord[] };
    this.links = Array.isArray(p.links) ? p.links : [];
    this.sessions = Array.isArray(p.sessions) ? p.sessions : [];
    this.prune();
  }

  /** Make a one-time link for `person` (checked by checkPersonName) valid `ttlMs`; the token is returned once and stored only hashed. */
  createLink(ttlMs: number, person?: string): { id: string; token: string; expires_at: number; person?: string } {
    const now = this.clock.now();
    const token = newToken();
    const rec: LinkRecord = { id: newId(), token_sha256: sha256(token), created_at: now, expires_at: now + ttlMs, ...(person !== undefined ? { person: checkPersonName(person) } : {}) };
    this.links.push(rec);
    this.save();
    return { id: rec.id, token, expires_at: rec.expires_at, ...(rec.person ? { person: rec.person } : {}) };
  }

  /**
   * Open a session with a link token: the link is used up (it opens nothing
   * again). Returns the session and its token, or undefined for a token that
   * is unknown, used or expired.
   */
  redeemLink(token: string, kind: SessionRecord['kind'], label?: string): { session: SessionRecord; token: string } | undefined {
    this.prune();
    const h = sha256(token);
    const i = this.links.findIndex((l) => l.token_sha256 === h);
    if (i < 0) return undefined;
    const [link] = this.links.splice(i, 1);
    const now = this.clock.now();
    const secret = newToken();
    const session: SessionRecord = { id: newId(), kind, token_sha256: sha256(secret), created_at: now, last_seen_at: now, ...(link!.person ? { person: link!.person } : {}), ...(label ? { label: label.slice(0, 120) } : {}) };
    this.sessions.push(session);
    this.save();
    return { session, token: secret };
  }

  /** The session a token (cookie or bearer) belongs to, marking it used; undefined when unknown or expired. */
  authenticate(token: string | undefined): SessionRecord | undefined {
    if (!token) return undefined;
    const h = sha256(token);
    const s = this.sessions.find((x) => x.token_sha256 === h);
    if (!s) return undefined;
    const now = this.clock.now();
    if (now - s.last_seen_at > this.sessionTtlMs()) {
      this.prune();
      return undefined;
    }
    const write = now - s.last_seen_at > AuthStore.SEEN_WRITE_MS;
    s.last_seen_at = now;
    if (write) this.save();
    return s;
  }

  /**
   * Make a pairing code: six digits the box says aloud, so a person in the
   * room can sign a browser in without the CLI (issue 16 "Access": consent is
   * hearing the box). Behind it is an ordinary one-time link valid `ttlMs`
   * (listed and revocable as links are); the code itself lives only in
   * memory, hashed. A new code replaces the previous one (its link goes);
   * `PAIRING_TRIES` wrong codes use it up. Returns the code once.
   */
  createPairingCode(ttlMs: number): { code: string; link_id: string; expires_at: number } {
    this.dropPairing();
    const link = this.createLink(ttlMs);
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    this.pairing = { code_sha256: sha256(code), token: link.token, link_id: link.id, expires_at: link.expires_at, tries: 0 };
    return { code, link_id: link.id, expires_at: link.expires_at };
  }

  /**
   * Open a session with the pairing code said aloud (spaces and dashes
   * ignored): as redeemLink with its link. Undefined for a wrong, used or
   * expired code; the `PAIRING_TRIES`th wrong one ends the code.
   */
  redeemPairingCode(code: string, kind: SessionRecord['kind'], label?: string): { session: SessionRecord; token: string } | undefined {
    const p = this.pairing;
    if (!p) return undefined;
    if (this.clock.now() >= p.expires_at || !this.links.some((l) => l.id === p.link_id)) {
      this.dropPairing();
      return undefined;
    }
    if (sha256(code.replace(/[\s-]/g, '')) !== p.code_sha256) {
      if (++p.tries >= AuthStore.PAIRING_TRIES) this.dropPairing();
      return undefined;
    }
    this.pairing = undefined;
    return this.redeemLink(p.token, kind, label);
  }

  /** Wrong pairing codes that end a code. */
  static readonly PAIRING_TRIES = 5;
  private pairing: { code_sha256: string; token: string; link_id: string; expires_at: number; tries: number } | undefined;

  private dropPairing(): void {
    const p = this.pairing;
    this.pairing = undefined;
    if (p && this.links.some((l) => l.id === p.link_id)) this.revoke(p.link_id);
  }

  /** Pending links and open sessions, oldest first. */
  list(): AccessEntry[] {
    this.prune();
    const ttl = this.sessionTtlMs();
    return [
      ...this.links.map((l): AccessEntry => ({ id: l.id, kind: 'link', created_at: l.created_at, expires_at: l.expires_at, ...(l.person ? { person: l.person } : {}) })),
      ...this.sessions.map((s): AccessEntry => ({ id: s.id, kind: s.kind, created_at: s.created_at, last_seen_at: s.last_seen_at, expires_at: s.last_seen_at + ttl, ...(s.person ? { person: s.person } : {}), ...(s.label ? { label: s.label } : {}) })),
    ].sort((a, b) => a.created_at - b.created_at);
  }

  /** Revoke the link or session `id`: it opens nothing from now on. Throws HomeAgentError NOT_FOUND naming the id when there is none. */
  revoke(id: string): AccessEntry {
    const entry = this.list().find((e) => e.id === id);
    if (!entry) throw new HomeAgentError('NOT_FOUND', `no WebUI session or link with id ${JSON.stringify(id)} (homeagent webui sessions lists them)`);
    this.links = this.links.filter((l) => l.id !== id);
    this.sessions = this.sessions.filter((s) => s.id !== id);
    this.save();
    return entry;
  }

  /** Whether session `id` is still open. */
  has(id: string): boolean {
    return this.sessions.some((s) => s.id === id);
  }

  /** Drop expired links and sessions (saved when something went). */
  private prune(): void {
    const now = this.clock.now();
    const ttl = this.sessionTtlMs();
    const before = this.links.length + this.sessions.length;
    this.links = this.links.filter((l) => l.expires_at > now);
    this.sessions = this.sessions.filter((s) => now - s.last_seen_at <= ttl);
    if (this.links.length + this.sessions.length !== before) this.save();
  }

  /** Write the store now (also on every change). */
  save(): void {
    writeFileAtomic(this.file, encodeVersionedJson(WEBUI_SESSIONS_STORE, { links: this.links, sessions: this.sessions }));
  }
}

/**
 * Sign-in attempts per client address and minute (issue 16 "login attempts
 * are rate-limited"): a fixed one-minute window per address; `perMinute()` is
 * read at each attempt. Holds at most `maxAddresses` windows (the oldest go).
 */
export class LoginLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  constructor(
    private readonly clock: Clock,
    private readonly perMinute: () => number,
    private readonly maxAddresses = 4096,
  ) {}

  /** Count an attempt from `address`: allowed, or refused with the seconds until the window ends. */
  attempt(address: string): { ok: true } | { ok: false; retry_after_s: number } {
    const now = this.clock.now();
    let w = this.windows.get(address);
    if (!w || now - w.start >= 60_000) {
      this.windows.delete(address);
      w = { start: now, count: 0 };
      this.windows.set(address, w);
      if (this.windows.size > this.maxAddresses) this.windows.delete(this.windows.keys().next().value!);
    }
    w.count++;
    if (w.count > this.perMinute()) return { ok: false, retry_after_s: Math.max(1, Math.ceil((w.start + 60_000 - now) / 1000)) };
    return { ok: true };
  }
}
