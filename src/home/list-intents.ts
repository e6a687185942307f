/**
 * List intents done locally (no LLM), in English and Chinese, on the box's
 * shopping list and to-do list (src/plugins/lists): HassShoppingListAddItem,
 * HassListAddItem, HassShoppingListCompleteItem and HassListCompleteItem
 * (Home Assistant's names), HassListRemoveItem and HassListGetItems (the
 * box's own: Home Assistant has no intent to remove an item or read a list
 * back). The slot `list` is `shopping` or `todo`; a list the box does not
 * keep (a `{list}` name from elsewhere) is not ours (undefined: the LLM).
 */
import type { IntentSlots } from '../intents/types.js';
import { isListName, itemKey, ListError, MAX_ITEM_CHARS, type ListName, type ListService } from '../plugins/lists/list-service.js';
import { cap, joinNames, type Lang } from './replies.js';
import { joinTokens, tokenise, type IntentLanguage } from '../intents/normalise.js';
import { GROCERY_ITEMS_EN } from '../intents/builtin-lists.js';

/** The list intents this module answers. */
export const LIST_INTENTS: ReadonlySet<string> = new Set([
  'HassShoppingListAddItem', 'HassListAddItem', 'HassShoppingListCompleteItem', 'HassListCompleteItem', 'HassListRemoveItem', 'HassListGetItems', 'HassListClear',
]);

const LIST_EN: Record<ListName, string> = { shopping: 'shopping list', todo: 'to-do list' };
const LIST_ZH: Record<ListName, string> = { shopping: '购物清单', todo: '待办事项' };

/**
 * Do a list intent on `lists`; the reply, or undefined when the intent names
 * a list the box does not keep. Throws ListError for an item that is too long.
 */
export function handleListIntent(lists: ListService | undefined, intent: string, s: IntentSlots, lang: Lang): string | undefined {
  const list = intent.startsWith('HassShoppingList') ? 'shopping' : s.list;
  if (!isListName(list)) return undefined;
  const zh = lang === 'zh';
  if (!lists) return zh ? '清单现在不可用。' : 'The lists are not available right now.';
  const where = zh ? LIST_ZH[list] : LIST_EN[list];
  if (intent === 'HassListGetItems') {
    const items = lists.items(list).map((i) => i.text);
    if (!items.length) return zh ? `${where}是空的。` : `Your ${where} is empty.`;
    if (zh) return `${where}上有${items.length}项：${joinNames(items, lang)}。`;
    return `Your ${where} has ${items.length === 1 ? '1 item' : `${items.length} items`}: ${joinNames(items, lang)}.`;
  }
  if (intent === 'HassListClear') return listCleared(list, lists.items(list).filter((i) => lists.remove(list, { id: i.id }) !== undefined).length, lang);
  const item = typeof s.item === 'string' ? s.item.trim() : '';
  if (!item) return zh ? '要加什么？' : 'Which item?';
  // An article before an item is no part of it: "add an egg" with eggs on the list is eggs, not a new item "an egg".
  // A to-do is one, commas and all: a to-do is often a sentence ("email Bob, Alice and Carol about the party"), and
  // a tester's was cut into "email bob" and "alice and carol about the party".
  const said = zh
    ? splitListItemsZh(item, list === 'shopping')
    : list === 'todo'
      ? [item.replace(/\s*,\s*/g, ', ')]
      : splitListItems(item, [...GROCERY_ITEMS_EN, ...lists.items(list).map((i) => i.text)])
          // Polite words typed inside the slot are none of the item ("add milk please to ..."), nor is a lone article.
          .map((x) => x.replace(/^(?:all (?:of )?the|a|an|some|the)\s+(?=\S)/i, '').replace(/\s+(?:please|for me|thanks|thank you)$/i, ''))
          .filter((x) => !/^(?:a|an|the|some|please|and|thanks)$/i.test(x));
  if (!said.length) return zh ? '要加什么？' : 'Which item?';
  // Every item checked before any is added: a tester's "add sugar, <a 251-character word>" added sugar and said only the error.
  const long = said.find((x) => x.length > MAX_ITEM_CHARS);
  if (long !== undefined) throw new ListError(zh ? `一项最多${MAX_ITEM_CHARS}个字（这一项有${long.length}个），什么都没有加。` : `An item is at most ${MAX_ITEM_CHARS} characters (one here has ${long.length}), so nothing was changed.`);
  switch (intent) {
    case 'HassShoppingListAddItem':
    case 'HassListAddItem': {
      const rs = said.map((x) => lists.add(list, x));
      const added = rs.filter((r) => r.added).map((r) => r.item.text);
      const there = rs.filter((r) => !r.added).map((r) => r.item.text);
      if (zh) return [added.length ? `已把${joinNames(added, lang)}加到${where}。` : '', there.length ? `${joinNames(there, lang)}已经在${where}上了。` : ''].join('');
      const already = there.length ? `${cap(joinNames(there, lang))} ${isOrAre(there)} already on your ${where}.` : '';
      return added.length ? `Added ${joinNames(added, lang)} to your ${where}.${already ? ` ${already}` : ''}` : already;
    }
    case 'HassListRemoveItem': {
      const done = said.map((x) => ({ x, r: lists.remove(list, { text: x }) }));
      if (zh) return doneReplyZh(done, (x) => `已把${x}从${where}删掉。`, where);
      return doneReply(done, 'Removed', 'from', where, lang);
    }
    case 'HassShoppingListCompleteItem':
    case 'HassListCompleteItem': {
      const done = said.map((x) => ({ x, r: lists.complete(list, { text: x }) }));
      if (zh) return doneReplyZh(done, (x) => `已把${x}标记为完成。`, where);
      return doneReply(done, 'Ticked off', 'on', where, lang);
    }
    default:
      return undefined;
  }
}

/**
 * What a list intent that changes the list would do, said as a question's
 * part ("add salt to your to-do list", "tick off salt on your to-do list",
 * "remove salt from your to-do list", "把盐加到待办事项"), for asking first
 * (a voice to-do item: voice/stt/pocketsphinx-judge.ts todoAsks); undefined
 * for any other intent, a list the box does not keep, or no item.
 */
/** What emptying `list` did: `n` items removed ("Removed all 5 items from your shopping list.", "已清空购物清单（5项）。"). */
export function listCleared(list: ListName, n: number, lang: Lang): string {
  if (lang === 'zh') return n ? `已清空${LIST_ZH[list]}（${n}项）。` : `${LIST_ZH[list]}已经是空的。`;
  return n ? `Removed all ${n === 1 ? '1 item' : `${n} items`} from your ${LIST_EN[list]}.` : `Your ${LIST_EN[list]} is already empty.`;
}

/** Emptying `list` of its `n` open items, said as a question's part ("remove all 5 items from your shopping list", "清空购物清单（5项）"). */
export function listClearPhrase(list: ListName, n: number, lang: Lang): string {
  return lang === 'zh' ? `清空${LIST_ZH[list]}（${n}项）` : `remove all ${n === 1 ? '1 item' : `${n} items`} from your ${LIST_EN[list]}`;
}

export function listActPhrase(intent: string, s: IntentSlots, lang: Lang): string | undefined {
  const list = intent.startsWith('HassShoppingList') ? 'shopping' : s.list;
  const item = typeof s.item === 'string' ? s.item.trim() : '';
  if (!isListName(list) || !item) return undefined;
  const zh = lang === 'zh';
  switch (intent) {
    case 'HassShoppingListAddItem':
    case 'HassListAddItem':
      return zh ? `把${item}加到${LIST_ZH[list]}` : `add ${item} to your ${LIST_EN[list]}`;
    case 'HassShoppingListCompleteItem':
    case 'HassListCompleteItem':
      return zh ? `把${LIST_ZH[list]}上的${item}标记为完成` : `tick off ${item} on your ${LIST_EN[list]}`;
    case 'HassListRemoveItem':
      return zh ? `把${item}从${LIST_ZH[list]}删掉` : `remove ${item} from your ${LIST_EN[list]}`;
    default:
      return undefined;
  }
}

/**
 * The verb for `items` said together: "are" for several, or for one whose
 * last word is a plural ("bananas are", "eggs are"; not "glass", "hummus",
 * "this"); "is" otherwise. A newcomer read "Bananas is not on ...".
 */
function isOrAre(items: readonly string[]): 'is' | 'are' {
  if (items.length !== 1) return 'are';
  const last = (items[0] ?? '').trim().split(/\s+/).pop()?.toLowerCase() ?? '';
  return last.length > 3 && /[^su]s$/.test(last) && !/(?:is|ss)$/.test(last) ? 'are' : 'is';
}

/** "Removed eggs and bread from your shopping list. Milk is not on your shopping list." from each said item `x` and what was changed, `r` (undefined: it was not on the list). */
function doneReply(done: Array<{ x: string; r: { text: string } | undefined }>, verb: string, prep: string, where: string, lang: Lang): string {
  const changed = done.filter((d) => d.r).map((d) => d.r!.text);
  const missing = done.filter((d) => !d.r).map((d) => d.x);
  const absent = missing.length ? `${cap(joinNames(missing, lang))} ${isOrAre(missing)} not on your ${where}.` : '';
  return changed.length ? `${verb} ${joinNames(changed, lang)} ${prep} your ${where}.${absent ? ` ${absent}` : ''}` : absent;
}

/** doneReply in Chinese: `changed` says what was removed or ticked off; what was not on the list is said after it. */
function doneReplyZh(done: Array<{ x: string; r: { text: string } | undefined }>, changed: (items: string) => string, where: string): string {
  const hit = done.filter((d) => d.r).map((d) => d.r!.text);
  const missing = done.filter((d) => !d.r).map((d) => d.x);
  return [hit.length ? changed(joinNames(hit, 'zh')) : '', missing.length ? `${where}上没有${joinNames(missing, 'zh')}。` : ''].join('');
}

/**
 * The items one Chinese item slot names: on the shopping list the parts
 * between typed commas (，、, as itemWithCommas put them back) and the parts
 * joined by 和 ("鸡蛋、面包和牛奶": three); a 和 that opens a part stays in
 * it ("和牛", wagyu). On the to-do list the slot is one item, as in English
 * (handleListIntent): a to-do is often a sentence with commas or "and" in
 * it ("跟小王和小李吃饭").
 * @param item the slot's text, trimmed, not empty
 * @param shopping whether the list is the shopping list
 */
export function splitListItemsZh(item: string, shopping: boolean): string[] {
  if (!shopping) return [item.replace(/\s*[,，]\s*/g, '，')];
  const parts = item.split(/\s*[,，、]\s*/).map((p) => p.trim()).filter(Boolean);
  const out = parts.flatMap((p) => p.split(/(?<=[^\s和])\s*和\s*(?=\S)/).map((x) => x.trim()).filter(Boolean));
  return out.length ? out : [item];
}

/** A word standing for a typed comma while the typed text is read again (itemWithCommas). */
const LIST_COMMA = 'xlistcommax';

/**
 * The item slot `item` (as the matcher gave it: lower case, no punctuation)
 * with the commas typed between its words in `raw` put back ("eggs, bread
 * and milk"), for splitListItems; undefined when `raw` has none there. The
 * item's words are found in `raw` read with each comma kept as a word
 * (LIST_COMMA), so a comma elsewhere ("add salt, sugar to my list, please",
 * "please, add ...") changes nothing. A comma between digits is part of a
 * number ("1,000", "2,5": normalise.ts). A tester's commas after the list
 * ("..., please") made every item one.
 */
export function itemWithCommas(raw: string, item: string, language: IntentLanguage): string | undefined {
  if (!/(?:(?<!\d),|,(?!\d)|[，、])/.test(raw)) return undefined;
  const marked = tokenise(raw.replace(/\s*(?:(?<!\d),|,(?!\d)|[，、])\s*/g, ` ${LIST_COMMA} `), language);
  const want = tokenise(item, language);
  if (!want.length) return undefined;
  for (let start = 0; start < marked.length; start++) {
    if (marked[start] !== want[0]) continue;
    const parts: string[][] = [[]];
    let k = 0;
    let i = start;
    for (; i < marked.length && k < want.length; i++) {
      if (marked[i] === LIST_COMMA) parts.push([]);
      else if (marked[i] === want[k]) {
        parts[parts.length - 1]!.push(marked[i]!);
        k++;
      } else break;
    }
    if (k < want.length) continue;
    const words = parts.filter((p) => p.length > 0);
    return words.length > 1 ? words.map((p) => joinTokens(p, language)).join(', ') : undefined;
  }
  return undefined;
}

/**
 * The items one item slot names (English): "eggs and bread" is two items,
 * "eggs and bread and milk" three, when the slot is `known` items (common
 * groceries and what is on the list, compared case-insensitively, the
 * longest first: "toilet paper") each joined to the next by "and", and
 * nothing else; otherwise the whole slot is one item: "mac and cheese",
 * "call mom and dad", and "fish oil and eggs" (two known words with no
 * "and" between them may be one item). A typed "add eggs and bread to my
 * shopping list" used to add one item "eggs and bread". Commas typed
 * between items always separate them ("call mom, pay the bills": two).
 * @param item the slot's text, trimmed, not empty
 * @param known item texts, any case
 * @returns the items in the order said, each as the slot spelt it
 */
export function splitListItems(item: string, known: Iterable<string>): string[] {
  // Commas are the person's own separators ("eggs, bread and milk": LIST_COMMA): each part, an "and" at its ends
  // dropped ("juice and, water"), is split again as below.
  if (item.includes(',')) {
    const parts = item.split(',').map((p) => p.trim().replace(/^and(?:\s+|$)/i, '').replace(/\s+and$/i, '').trim()).filter(Boolean);
    const list = [...known];
    return parts.flatMap((p) => splitListItems(p, list));
  }
  const words = item.split(/\s+/);
  if (!words.some((w) => w.toLowerCase() === 'and')) return [item];
  // Singular and plural alike ("egg and bread", "tomato and onions"), compared as the list compares items (itemKey).
  const set = new Set([...known].map(itemKey));
  const isKnown = (ws: readonly string[]): boolean => set.has(itemKey(ws.join(' ')));
  const longest = Math.max(1, ...[...set].map((k) => k.split(' ').length));
  const out: string[] = [];
  for (let i = 0; i < words.length; ) {
    if (words[i]!.toLowerCase() === 'and') {
      // "and" only between two items.
      if (out.length === 0 || i === words.length - 1 || words[i + 1]!.toLowerCase() === 'and') return [item];
      i++;
      continue;
    }
    let n = Math.min(longest, words.length - i);
    while (n > 0 && !isKnown(words.slice(i, i + n))) n--;
    if (n === 0) return [item];
    out.push(words.slice(i, i + n).join(' '));
    i += n;
    // Two items with no "and" between them may be one ("fish oil and eggs"): the whole slot stays one item.
    if (i < words.length && words[i]!.toLowerCase() !== 'and') return [item];
  }
  return out.length > 1 ? out : [item];
}
