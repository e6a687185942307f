/**
 * Two commands in one breath (issue 15 "Never the wrong action"): "turn on
 * the kitchen light and lock the front door". The sentence is split at a
 * joint word ("and", "then", "and then"; Chinese 然后, 再, 并且, or a comma
 * between two commands) where both halves are whole sentences of the
 * grammar; the halves are then placed (resolved) before either acts
 * (LocalIntents.handleAll). Pure: no matching here, only where to cut.
 */
import { tokenise, joinTokens, type IntentLanguage } from '../intents/normalise.js';

/** Joint words, longest first ("and then" before "and"). */
const JOINTS_EN: readonly (readonly string[])[] = [['and', 'then'], ['and', 'also'], ['and'], ['then'], ['also']];
/** Chinese joints, as the tokeniser's one-character tokens ("然后" -> 然, 后). */
const JOINTS_ZH: readonly (readonly string[])[] = [['然', '后'], ['并', '且'], ['再'], ['和']];

/**
 * Every way to cut `text` in two at a joint: [first, second] in the order
 * said, the joint dropped, neither half empty. Empty when there is no joint.
 */
export function compoundCuts(text: string, language: IntentLanguage): Array<[string, string]> {
  // A quoted stretch is one name as written ('turn on the "salt and pepper lamp"'): never cut inside quotes.
  if (/["“”「」『』]/.test(text)) return [];
  const tokens = tokenise(text, language);
  const joints = language === 'zh' ? JOINTS_ZH : JOINTS_EN;
  const cuts: Array<[string, string]> = [];
  const seen = new Set<string>();
  // A comma between two commands (the tokeniser drops punctuation, so cut the text itself). The second part is
  // the text as written, its own commas kept, so that a list ("A, B, C and D") is cut again there
  // (HomePlugin.compound); a cut at a joint word would glue the parts around a comma ("B C"), so none is offered.
  const comma = /[,，;；]/.exec(text);
  if (comma) {
    const a = tokenise(text.slice(0, comma.index), language);
    const raw = text.slice(comma.index + 1).trim();
    const b = tokenise(raw, language);
    const bj = joints.find((j) => j.every((w, k) => b[k] === w));
    const rest = bj ? dropLeadingTokens(raw, bj.length, language) : raw;
    if (a.length && tokenise(rest, language).length) cuts.push([joinTokens(a, language), rest]);
    return cuts;
  }
  for (let i = 1; i < tokens.length - 1; i++) {
    for (const j of joints) {
      if (!j.every((w, k) => tokens[i + k] === w)) continue;
      const a = tokens.slice(0, i);
      const b = tokens.slice(i + j.length);
      if (a.length === 0 || b.length === 0) continue;
      const key = `${i}:${j.length}`;
      if (seen.has(key)) continue;
      seen.add(key);
      cuts.push([joinTokens(a, language), joinTokens(b, language)]);
      break;
    }
  }
  return cuts;
}

/**
 * `raw` without its first `n` tokens (as tokenise counts them), the rest as
 * written: English drops whole words, Chinese characters (the tokeniser's
 * Chinese tokens are single characters).
 */
function dropLeadingTokens(raw: string, n: number, language: IntentLanguage): string {
  if (language === 'zh') {
    let left = n;
    let i = 0;
    for (; i < raw.length && left > 0; i++) if (tokenise(raw[i]!, language).length) left--;
    return raw.slice(i).trim();
  }
  return raw.replace(new RegExp(`^\\W*(?:[\\w']+\\W+){${n}}`), '').trim();
}
