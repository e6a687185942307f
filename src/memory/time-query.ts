/**
 * Time awareness of recall: the time range a query names, explicit ("on
 * October 13, 2023", "in May 2023", "2023年10月13日"), without its year ("in
 * June", "on Aug 15th": the latest that has begun), a year ("in 2022") or
 * relative to now ("yesterday", "last week", "昨天", "上周"). Documents inside
 * the range are ranked up by the document store. Also whether a query asks
 * when (asksWhen) and whether a turn says when (mentionsTime).
 */

/** A half-open time range [from, to), ms since epoch (UTC days). */
export interface TimeRange {
  from: number;
  to: number;
}

const DAY = 86_400_000;
const HOUR = 3_600_000;
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH_RE = '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';

function month(name: string): number {
  return MONTHS.indexOf(name.slice(0, 3).toLowerCase());
}

function day(y: number, m: number, d: number): TimeRange {
  const from = Date.UTC(y, m, d);
  return { from, to: from + DAY };
}

function startOfDay(ms: number): number {
  return Math.floor(ms / DAY) * DAY;
}

/** Parts of a day (local hours [from, to)), for "this morning", "this afternoon", "this evening", "tonight", "last night". */
const PARTS: ReadonlyArray<{ re: RegExp; from: number; to: number; dayOffset: number }> = [
  { re: /\bthis morning\b|今天早上|今天上午|今早/, from: 5, to: 12, dayOffset: 0 },
  { re: /\bthis afternoon\b|今天下午/, from: 12, to: 18, dayOffset: 0 },
  { re: /\bthis evening\b|\btonight\b|今天晚上|今晚/, from: 18, to: 24, dayOffset: 0 },
  { re: /\byesterday morning\b|昨天早上|昨天上午/, from: 5, to: 12, dayOffset: -1 },
  { re: /\byesterday afternoon\b|昨天下午/, from: 12, to: 18, dayOffset: -1 },
  { re: /\byesterday evening\b|昨天晚上/, from: 18, to: 24, dayOffset: -1 },
  { re: /\blast night\b|昨晚|昨夜/, from: 18, to: 30, dayOffset: -1 },
];

/** Options of `queryTimeRange`. */
export interface TimeQueryOptions {
  /**
   * Read a month or day named without its year ("in June", "on Aug 15th")
   * and a year alone ("in 2022") as time ranges (default true). A rule added
   * after reading LoCoMo's misses; the LoCoMo bench turns it off to measure
   * it on conversations it was not designed on.
   */
  partialDates?: boolean;
}

/**
 * A month or day named without its year, after a preposition ("may" and
 * "march" are verbs too): the latest one that has begun by `now` ("in
 * June", "on Aug 15th"); or a year alone ("in 2022"). Undefined when `q`
 * (lower case) names none.
 */
function partialDate(q: string, now: number): TimeRange | undefined {
  const year = new Date(now).getUTCFullYear();
  const prep = '\\b(?:on|by|since|before|after|until|from|to|around)\\s+(?:the\\s+)?';
  let m = new RegExp(`${prep}${MONTH_RE}\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?\\b(?!\\s*[,:]?\\s*\\d)`).exec(q) ?? new RegExp(`${prep}(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH_RE}\\b(?!,?\\s*\\d)`).exec(q);
  if (m) {
    const [mo, d] = /^\d/.test(m[1]!) ? [month(m[2]!), Number(m[1])] : [month(m[1]!), Number(m[2])];
    if (d >= 1 && d <= 31) return day(Date.UTC(year, mo, d) <= now ? year : year - 1, mo, d);
  }
  m = new RegExp(`\\b(?:in|during|since|of|last|early|late|mid-?)\\s+(?:early\\s+|late\\s+|mid-?)?${MONTH_RE}\\b(?!\\s*[,.]?\\s*\\d)`).exec(q);
  if (m) {
    const mo = month(m[1]!);
    const y = Date.UTC(year, mo, 1) <= now ? year : year - 1;
    return { from: Date.UTC(y, mo, 1), to: Date.UTC(y, mo + 1, 1) };
  }
  m = /\b(?:in|during|of|since)\s+(?:early\s+|late\s+|mid-?)?((?:19|20)\d\d)\b/.exec(q);
  if (m) return { from: Date.UTC(Number(m[1]), 0, 1), to: Date.UTC(Number(m[1]) + 1, 0, 1) };
  return undefined;
}

/**
 * The time range `query` refers to, or undefined. `now` (ms) anchors
 * relative expressions. Explicit dates win over relative ones.
 * `offsetMs`: the household's time zone offset from UTC at `now` (ms, east
 * positive; default 0: days are UTC days, as the recall benches' dates are).
 * Parts of a day are local hours: morning 05-12, afternoon 12-18, evening
 * and tonight 18-24, last night 18 of yesterday to 06 of today.
 * `opts.partialDates`: see TimeQueryOptions.
 */
export function queryTimeRange(query: string, now: number, offsetMs = 0, opts: TimeQueryOptions = {}): TimeRange | undefined {
  const q = query.toLowerCase();
  let m = new RegExp(`\\b${MONTH_RE}\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?(?:,\\s*|\\s+)(\\d{4})\\b`).exec(q);
  if (m) return day(Number(m[3]), month(m[1]!), Number(m[2]));
  m = new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH_RE},?\\s+(\\d{4})\\b`).exec(q);
  if (m) return day(Number(m[3]), month(m[2]!), Number(m[1]));
  m = /(\d{4})年(\d{1,2})月(\d{1,2})[日号]/.exec(q);
  if (m) return day(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  m = new RegExp(`\\b${MONTH_RE},?\\s+(\\d{4})\\b`).exec(q);
  if (m) return { from: Date.UTC(Number(m[2]), month(m[1]!), 1), to: Date.UTC(Number(m[2]), month(m[1]!) + 1, 1) };
  const partial = opts.partialDates === false ? undefined : partialDate(q, now);
  if (partial) return partial;
  m = /(\d{4})年(\d{1,2})月(?!\d)/.exec(q);
  if (m) return { from: Date.UTC(Number(m[1]), Number(m[2]) - 1, 1), to: Date.UTC(Number(m[1]), Number(m[2]), 1) };
  m = /(?<!\d)(\d{1,2})月(\d{1,2})[日号]/.exec(q);
  if (m) return day(new Date(now).getUTCFullYear(), Number(m[1]) - 1, Number(m[2]));
  const today = startOfDay(now + offsetMs) - offsetMs;
  for (const p of PARTS) {
    if (p.re.test(q)) return { from: today + p.dayOffset * DAY + p.from * HOUR, to: today + p.dayOffset * DAY + p.to * HOUR };
  }
  if (/\btoday\b|今天/.test(q)) return { from: today, to: today + DAY };
  if (/\bday before yesterday\b|前天/.test(q)) return { from: today - 2 * DAY, to: today - DAY };
  if (/\byesterday\b|昨天/.test(q)) return { from: today - DAY, to: today };
  if (/\blast week\b|上周|上个星期|上星期/.test(q)) return { from: today - 14 * DAY, to: today - 6 * DAY };
  if (/\bthis week\b|这周|本周/.test(q)) return { from: today - 7 * DAY, to: today + DAY };
  if (/\blast month\b|上个月/.test(q)) return { from: today - 62 * DAY, to: today - 27 * DAY };
  return undefined;
}

/** Formatters by zone name ('' the system's): building one costs about a millisecond, and every recall reads the zone. */
const FORMATS = new Map<string, Intl.DateTimeFormat>();

/**
 * The offset from UTC (ms, east positive) of the IANA `timeZone` at `at`
 * (ms since epoch); the system's zone when `timeZone` is empty or unknown.
 */
export function zoneOffsetMs(timeZone: string | undefined, at: number): number {
  const key = timeZone || '';
  let fmt = FORMATS.get(key);
  if (!fmt) {
    try {
      fmt = new Intl.DateTimeFormat('en-US', { timeZone: timeZone || undefined, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    } catch {
      fmt = new Intl.DateTimeFormat('en-US', { hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    }
    FORMATS.set(key, fmt);
  }
  const parts = Object.fromEntries(fmt.formatToParts(new Date(at)).map((p) => [p.type, p.value]));
  const local = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  return local - Math.floor(at / 1000) * 1000;
}

/** Whether `query` asks when something happened or how long ago ("When did ...", "How long has ...", "What year ..."). */
export function asksWhen(query: string): boolean {
  return /^\s*(?:when\b|how long\b|since when\b|what (?:year|month|date|day|time)\b)|什么时候|哪天|哪一天|多久/i.test(query);
}

const WEEKDAY = '(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)';
/** Words by which a turn says when something happened: relative days, "last week", "two years ago", a year, a month's name ("may" and "march" only as months). */
const TIME_CUE = new RegExp(
  `\\b(?:yesterday|today|tonight|tomorrow|recently|ago|(?:last|this|next|past) (?:night|week(?:end)?|month|year|summer|winter|spring|fall|autumn|${WEEKDAY})|${WEEKDAY}|(?:19|20)\\d\\d|jan(?:uary)?|feb(?:ruary)?|apr(?:il)?|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|(?:in|of|since|early|late|mid-?)\\s+(?:may|march)|(?:may|march)\\s+\\d{1,2}(?:st|nd|rd|th)?)\\b|昨天|前天|上周|上个月|去年|今天`,
  'i',
);

/** Whether `text` says when something happened (see TIME_CUE): the kind of turn that answers a `asksWhen` question. */
export function mentionsTime(text: string): boolean {
  return TIME_CUE.test(text);
}
