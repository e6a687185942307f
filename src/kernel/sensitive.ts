/**
 * Sensitive facts (issue 18; seed 002 §6.3 `sensitive`): health, money,
 * passwords and codes, and where the key is hidden. A fact or sentence about
 * one of these belongs to the person it is about: recall does not volunteer
 * it to another speaker (src/memory/social.ts `visibleTo`). The test is by
 * words, in English and Chinese, and errs on the side of "sensitive": a fact
 * wrongly kept private costs a question, one wrongly told can cost much more.
 */
import { UNKNOWN_SPEAKER, UNKNOWN_SPEAKER_ZH } from './people.js';

/** The kinds of sensitive facts. */
export type SensitiveTopic = 'health' | 'money' | 'secret' | 'key';

const TOPICS: ReadonlyArray<readonly [SensitiveTopic, RegExp]> = [
  [
    'health',
    /\b(?:my (?:doctor|dentist|therapist)|therapy|diagnos\w*|illness|disease|sick|cancer|diabet\w*|depress\w*|anxiety|pregnan\w*|medication|medicine|pills?|prescription|blood pressure|allerg\w*|surgery|symptoms?|mental health|insulin|hiv|std)\b|看病|生病|病了|住院|吃药|药物|怀孕|过敏|手术|抑郁|焦虑|血压|糖尿病|癌/i,
  ],
  [
    'money',
    /\b(?:salary|salaries|income|wage|debts?|loan|mortgage|bank(?:\s+account)?|account number|iban|credit card|debit card|card number|savings|tax(?:es)?|owes?|paycheck|net worth|bitcoin|crypto)\b|工资|收入|存款|银行|贷款|欠|信用卡|卡号|账户|理财|税/i,
  ],
  ['secret', /\b(?:password|passcode|pass code|pin(?: code| number)?|passphrase|security code|combination|safe code|alarm code|wifi key|secret)\b|密码|口令|验证码|暗号/i],
  ['key', /\b(?:spare key|key (?:is )?(?:hidden|under|behind|in the)|hid(?:e|den) the key|keys? (?:is|are) kept)\b|钥匙(?:藏|在|放)/i],
];

/** The sensitive topic `text` touches, or undefined when none. */
export function sensitiveTopic(text: string): SensitiveTopic | undefined {
  for (const [topic, re] of TOPICS) if (re.test(text)) return topic;
  return undefined;
}

/** Whether `text` touches a sensitive topic. */
export function isSensitiveText(text: string): boolean {
  return sensitiveTopic(text) !== undefined;
}

/** A name compared as the household says it: case-, width- and space-insensitive. */
export function personKey(name: string | null | undefined): string {
  const n = (name ?? '').normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase();
  return n === UNKNOWN_SPEAKER_ZH ? UNKNOWN_SPEAKER : n;
}

/**
 * Whether a sensitive thing owned by `owner` may be shown to `viewer` (the
 * person speaking; undefined: unidentified, who owns what unidentified
 * speakers said). Not sensitive: always. `viewer` null: a reader with no
 * person (a plugin): never.
 */
export function visibleTo(sensitive: boolean, owner: string | null | undefined, viewer: string | null | undefined): boolean {
  if (!sensitive) return true;
  if (viewer === null) return false;
  const o = owner === null || owner === undefined || owner === '' ? undefined : personKey(owner);
  if (o === undefined) return false;
  return o === personKey(viewer ?? UNKNOWN_SPEAKER);
}
