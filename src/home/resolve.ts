/**
 * The one entity resolver of the home: what a said or written reference
 * (a device's name, part of one, a room, a kind of device) points at. The
 * LLM's device tools (tools.ts) and the local intents (local-intents.ts) both
 * resolve through `resolveTarget`, so a name means the same device on both
 * paths.
 *
 * Rules, in order (issue 13, "one entity resolver"):
 *  1. A name: the registry id, or a device's exact name or alias
 *     (case and spacing ignored). Several exact hits are narrowed by the
 *     query's domain when that leaves some, and by its room; what is still
 *     several is ambiguous. A room said that the named device is not in
 *     (a device with no room excepted) is no match: the kind's own word
 *     ("the lights in the office", with a device called "Lights" elsewhere)
 *     is that room's set of the kind, any other name is not found.
 *  2. A partial name: every word of the reference is a word of the device's
 *     name or alias (or of one part of a zigbee2mqtt "room/name" path; a
 *     trailing plural "s" ignored; for Chinese, the characters appear in the
 *     name). Exactly one device (of the query's domain and room, when given)
 *     is that device.
 *  3. A room: a reference that is a room's name addresses the devices there
 *     (of the query's domain, when given).
 *  A partial name that fits several devices and is no room is ambiguous:
 *  the caller asks which, it is never widened to all of them. Nothing fits:
 *  not found, never the nearest other device.
 *
 * Without a name, a query addresses a set: a room and/or a domain ("the
 * lights in the office", "turn off the lights") means every device of that
 * domain in that room; a domain alone means the box's own room when one is
 * configured, else the whole home. A singular kind word said in place of a
 * name ("turn off the lamp", `device`) means one device: the devices whose
 * name has that word (rule 2) in that room (the box's own, when no room was
 * said), else in the home, else the devices of that domain there; one is
 * found, several are ambiguous. The kind's own name in the singular ("the
 * light") with a room said, or the box's own room, is that room's set, as the
 * plural is; with no room at all it is one device or asks which. A cover's
 * kind ("the blinds", `device_class`) keeps only the devices of that HA
 * device_class: a home with a garage door and no blinds has no blinds.
 */
import { hasHan } from '../kernel/language.js';
import type { Entity } from './entities.js';

/** What was said or written about the target. All fields optional; at least one should be set. */
export interface TargetQuery {
  /** A device's registry id, name, alias, part of a name, or a room's name. */
  name?: string;
  /** A room (HA area / suggested_area). */
  area?: string;
  /** An HA component (light, switch, cover, ...) the target must be. */
  domain?: string;
  /**
   * A singular kind word said instead of a name ("lamp", "light",
   * "switch"): one device of `domain` is meant.
   */
  device?: string;
  /**
   * An HA device_class the targets must have ("the blinds": blind), said in
   * place of a name; a set of a domain is narrowed to it, and none of it is
   * not found (never the domain's other devices).
   */
  device_class?: string;
}

/** Options of `resolveTarget`. */
export interface ResolveOptions {
  /** The box's own room: a domain-only query ("turn off the lights") addresses it. Absent: the whole home. */
  ownArea?: string;
}

/**
 * The outcome of resolving a reference:
 *  - `one`: exactly one device; `by` says which rule found it.
 *  - `set`: a room and/or domain addressed every device of that domain there
 *    (never empty); `area` is the room used (the query's, or the box's own).
 *  - `ambiguous`: a name or kind word fits several devices; the caller asks
 *    which, naming `candidates` (two or more).
 *  - `not_found`: nothing fits; `said` is the reference as given. `elsewhere`:
 *    the devices of that exact name, when a room was said that none of them
 *    is in ("the bed light in the kitchen"), so the reply can say where it is.
 */
export type Resolution =
  | { kind: 'one'; entity: Entity; by: 'id' | 'name' | 'partial' | 'kind' }
  | { kind: 'set'; entities: Entity[]; area?: string; domain?: string }
  | { kind: 'ambiguous'; candidates: Entity[]; said: string }
  | { kind: 'not_found'; said: string; elsewhere?: Entity[] };

/** Lower case, spaces collapsed, a leading "the" dropped. */
function norm(s: string | undefined): string {
  return (s ?? '').trim().toLowerCase().replace(/\s+/g, ' ').replace(/^the /, '');
}

/** Singular form of an English word: a trailing "es"/"s" dropped ("switches" -> "switch", "lights" -> "light"). */
function singular(w: string): string {
  if (/(ch|sh|x|ss)es$/.test(w)) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) return w.slice(0, -1);
  return w;
}

function words(s: string): string[] {
  return norm(s)
    .split(/[\s/_-]+/)
    .filter(Boolean)
    .map(singular);
}

/** Names and aliases of an entity. */
function namesOf(e: Entity): string[] {
  return [e.name, ...e.aliases].filter((n) => n && n.trim());
}

/** True when `said` is an exact name or alias of `e` (case and spacing ignored). */
function isExactName(e: Entity, said: string): boolean {
  const n = norm(said);
  return namesOf(e).some((x) => norm(x) === n);
}

/** True when every word of `said` is a word of one of `e`'s names (rule 2). */
function isPartialName(e: Entity, said: string): boolean {
  return partOfAName(namesOf(e), said);
}

/**
 * Rule 2 of the module comment on a device's `names` (its name and
 * aliases): every word of `said` is a word of one of them (a trailing plural
 * "s" ignored; for Chinese, the characters appear in one). The speech
 * grammar's parts of names (src/intents/grammar.ts) are chosen by the same
 * rule.
 */
export function partOfAName(names: readonly string[], said: string): boolean {
  const n = norm(said);
  if (!n) return false;
  if (hasHan(n)) {
    const compact = n.replace(/\s+/g, '');
    return names.some((x) => norm(x).replace(/\s+/g, '').includes(compact));
  }
  const want = words(n);
  return names.some((x) => {
    const have = new Set(words(x));
    return want.every((w) => have.has(w));
  });
}

function inArea(e: Entity, area: string | undefined): boolean {
  return !area || norm(e.area) === norm(area);
}

function ofDomain(e: Entity, domain: string | undefined): boolean {
  return !domain || e.component === domain;
}

/** Keep the entities that pass `keep` when any does; otherwise the list as it was. */
function narrow(list: Entity[], keep: (e: Entity) => boolean): Entity[] {
  const kept = list.filter(keep);
  return kept.length ? kept : list;
}

function oneOrMany(hits: Entity[], said: string, by: 'name' | 'partial' | 'kind'): Resolution | undefined {
  if (hits.length === 1) return { kind: 'one', entity: hits[0] as Entity, by };
  if (hits.length > 1) return { kind: 'ambiguous', candidates: hits, said };
  return undefined;
}

/**
 * Resolve `q` against `entities` (the registry's) by the rules of the module
 * comment. Pure: no registry access, no side effects.
 */
export function resolveTarget(entities: readonly Entity[], q: TargetQuery, opts: ResolveOptions = {}): Resolution {
  const all = [...entities];
  const name = q.name?.trim() ? q.name.trim() : undefined;
  if (name) {
    const byId = all.find((e) => e.id === name);
    if (byId) return { kind: 'one', entity: byId, by: 'id' };
    let exact = narrow(
      all.filter((e) => isExactName(e, name)),
      (e) => ofDomain(e, q.domain),
    );
    // Named with a room it is not in ("turn off the lights in the office", a light group called "Lights" in the
    // Bedroom): not that device. The kind's own word is every device of the kind in that room; another name is none
    // (a breaking tester's "lights in the office" switched off the Bedroom's group and no Office light). A device
    // with no room is not contradicted by one.
    const area = q.area?.trim() || undefined;
    if (area && exact.length) {
      // The kind's own word with a room is that room's set even beside a device of that name with no room (a tester's
      // room-less "Lights" took "turn off the lights in the office").
      const kindWord = q.domain !== undefined && singular(norm(name)) === q.domain;
      const fits = exact.filter((e) => inArea(e, area) || (!e.area && !kindWord));
      if (fits.length) exact = fits;
      else if (kindWord) {
        const there = all.filter((e) => ofDomain(e, q.domain) && inArea(e, area));
        return there.length ? { kind: 'set', entities: there, area, domain: q.domain } : { kind: 'not_found', said: `${q.domain} in ${area}` };
      } else return { kind: 'not_found', said: `${name} in the ${area}`, elsewhere: exact };
    }
    const named = oneOrMany(exact, name, 'name');
    if (named) return named;
    const partial = all.filter((e) => ofDomain(e, q.domain) && inArea(e, q.area) && isPartialName(e, name));
    if (partial.length === 1) return { kind: 'one', entity: partial[0] as Entity, by: 'partial' };
    const room = all.filter((e) => e.area && norm(e.area) === norm(name));
    if (room.length) {
      const there = room.filter((e) => ofDomain(e, q.domain));
      if (there.length) return { kind: 'set', entities: there, area: (room[0] as Entity).area, ...(q.domain ? { domain: q.domain } : {}) };
    }
    if (partial.length > 1) return { kind: 'ambiguous', candidates: partial, said: name };
    return { kind: 'not_found', said: name };
  }
  const own = opts.ownArea?.trim() || undefined;
  const area = q.area?.trim() || own;
  // The kind's own name in the singular with a room (the box's own: "turn off the light"; or a room the
  // matcher did not drop it for): every device of the kind there, as the plural.
  const kindWord = q.device?.trim() && q.domain !== undefined && singular(norm(q.device)) === q.domain;
  if (q.device?.trim() && !(kindWord && area)) {
    const said = q.device.trim();
    const scope = all.filter((e) => ofDomain(e, q.domain) && inArea(e, area));
    const named = (list: Entity[]): Resolution | undefined => oneOrMany(list.filter((e) => isPartialName(e, said)), said, 'partial');
    // "the lamp": a lamp in the room said (or the box's room), else the one lamp of the home, else the one light there.
    // The kind's own word with no room ("the light"): one device of the kind in the home, or ask which; a device
    // that merely has the word in its name ("Kitchen Light" next to a "Living Room Lamp") is not singled out by it.
    if (kindWord) return oneOrMany(scope, said, 'kind') ?? { kind: 'not_found', said };
    const hit =
      named(scope) ??
      (!q.area?.trim() && own ? named(all.filter((e) => ofDomain(e, q.domain))) : undefined) ??
      oneOrMany(scope, said, 'kind');
    return hit ?? { kind: 'not_found', said };
  }
  if (!area && !q.domain) return { kind: 'not_found', said: '' };
  const cls = q.device_class?.trim() || undefined;
  const set = all.filter((e) => ofDomain(e, q.domain) && inArea(e, area) && (!cls || e.device_class === cls));
  if (!set.length) return { kind: 'not_found', said: [cls ?? q.domain, area].filter(Boolean).join(' in ') };
  return { kind: 'set', entities: set, ...(area ? { area } : {}), ...(q.domain ? { domain: q.domain } : {}) };
}

/** The entities a resolution addresses (one, the set, or none for ambiguous / not found). */
export function targetsOf(r: Resolution): Entity[] {
  return r.kind === 'one' ? [r.entity] : r.kind === 'set' ? r.entities : [];
}
