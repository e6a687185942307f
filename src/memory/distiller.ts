/**
 * Rule distiller and cold-document distillation (seed 001 "Pipeline Rule
 * Distiller": 我叫X / 我住在X / 我喜欢X / 我X岁 / 我的工作是X, issue 5 adds the
 * English equivalents) turning what people say about themselves into graph
 * triples, and docToTriples for cold documents (seed 000 §4: 冷文档 -> 图).
 */
import type { Triple } from '../kernel/memory-types.js';
import { HAN, hasHan } from '../kernel/language.js';
import { keywords } from './text.js';
import { unknownSpeakerEntity } from '../kernel/people.js';
import { isSensitiveText } from '../kernel/sensitive.js';

interface Rule {
  re: RegExp;
  relation: string;
  objectType: string;
  /** Rewrite the captured object (e.g. add the unit to an age). */
  object?: (x: string) => string;
}

const ZH_END = '(?=[，。！？!?,.;；、\\s]|$)';
const ZH_RULES: Rule[] = [
  { re: new RegExp(`我(?:叫|的名字(?:是|叫)|名字叫)([${HAN}A-Za-z·]{1,12}?)${ZH_END}`, 'gu'), relation: '名字是', objectType: 'person' },
  { re: new RegExp(`我(?:现在)?(?:住在|家在)([^，。！？!?,.;；\\s]{1,20}?)${ZH_END}`, 'g'), relation: '住在', objectType: 'place' },
  { re: new RegExp(`我(?:很|最|特别|非常)?喜欢([^，。！？!?,.;；\\s]{1,20}?)${ZH_END}`, 'g'), relation: '喜欢', objectType: 'thing' },
  { re: /我(?:今年|已经)?(\d{1,3}|[一二三四五六七八九十百]{1,4})(?:周)?岁/g, relation: '年龄', objectType: 'age', object: (x) => `${x}岁` },
  { re: new RegExp(`我的(?:工作|职业)是([^，。！？!?,.;；\\s]{1,20}?)${ZH_END}`, 'g'), relation: '工作是', objectType: 'occupation' },
];

const EN_OBJ = "([A-Za-z0-9][A-Za-z0-9'’ -]{0,48}?)(?=\\s+(?:and|but|because|since|so|which|who)\\b|[,.!?;:]|$)";
const EN_RULES: Rule[] = [
  { re: new RegExp(`\\b(?:my name is|i'm called|i am called|call me)\\s+${EN_OBJ}`, 'gi'), relation: 'name', objectType: 'person' },
  { re: new RegExp(`\\b(?:i live in|i'm living in|i am living in|i live at)\\s+${EN_OBJ}`, 'gi'), relation: 'lives_in', objectType: 'place' },
  { re: new RegExp(`\\b(?:i (?:really )?(?:like|love|enjoy))\\s+${EN_OBJ}`, 'gi'), relation: 'likes', objectType: 'thing' },
  { re: /\bi(?: am|'m) (\d{1,3}) years? old\b/gi, relation: 'age', objectType: 'age', object: (x) => `${x} years old` },
  { re: new RegExp(`\\b(?:i work as(?: an?)?|my job is(?: an?)?|i'm employed as(?: an?)?)\\s+${EN_OBJ}`, 'gi'), relation: 'works_as', objectType: 'occupation' },
];

/**
 * The subject of what someone says about themselves: the person speaking
 * (issue 18: facts go to the person, never to the channel), or, when nobody
 * was identified, "someone in the household" ('家里某人' for Chinese text).
 */
export function defaultSubject(text: string): string {
  return unknownSpeakerEntity(text);
}

/**
 * Apply the personal-information rules to one utterance. `speaker` (the
 * person speaking) becomes the subject (default `defaultSubject`); each
 * match yields one triple with the sentence as reference, confidence 0.9,
 * owned by the subject and marked sensitive when the sentence touches
 * health, money, secrets or the hidden key (src/memory/sensitive.ts).
 */
export function ruleTriples(text: string, speaker?: string): Triple[] {
  const subject = speaker && speaker.trim() !== '' ? speaker.trim() : defaultSubject(text);
  const sensitive = isSensitiveText(text);
  const out: Triple[] = [];
  const normalized = text.normalize('NFKC').replace(/’/g, "'");
  for (const rule of [...ZH_RULES, ...EN_RULES]) {
    rule.re.lastIndex = 0;
    for (const m of normalized.matchAll(rule.re)) {
      const raw = (m[1] ?? '').trim().replace(/^(?:the|a|an)\s+/i, '');
      if (raw === '' || /^(?:not|no|to)$/i.test(raw)) continue;
      const object = rule.object ? rule.object(raw) : raw;
      if (object.toLowerCase() === subject.toLowerCase()) continue;
      out.push({
        subject,
        subject_type: 'person',
        relation: rule.relation,
        object,
        object_type: rule.objectType,
        confidence: 0.9,
        sentence: text.slice(0, 300),
        owner: subject,
        ...(sensitive ? { sensitive: true } : {}),
      });
    }
  }
  return out;
}

/**
 * Distil a cold document into triples: the personal-information rules on
 * what was said, plus up to three "mentioned" topics (nodejieba keywords for
 * Chinese, proper nouns for English) linked to the speaker with confidence 0.4.
 */
export function docToTriples(text: string, speaker: string | undefined): Triple[] {
  const out = ruleTriples(text, speaker);
  const subject = speaker && speaker.trim() !== '' ? speaker.trim() : defaultSubject(text);
  const topics = new Set<string>();
  if (hasHan(text)) {
    for (const k of keywords(text, 6)) if (hasHan(k) && k.length >= 2) topics.add(k);
  }
  for (const m of text.matchAll(/(?<=[a-z,;:]\s+)([A-Z][a-z]{2,}(?:\s+[A-Z][a-z]{2,})*)/g)) topics.add(m[1]!);
  const sentence = text.slice(0, 300);
  const sensitive = isSensitiveText(text);
  for (const topic of [...topics].slice(0, 3)) {
    if (topic.toLowerCase() === subject.toLowerCase()) continue;
    out.push({
      subject,
      subject_type: 'person',
      relation: hasHan(topic) ? '提到' : 'mentioned',
      object: topic,
      object_type: 'topic',
      confidence: 0.4,
      sentence,
      owner: subject,
      ...(sensitive ? { sensitive: true } : {}),
    });
  }
  return out;
}
