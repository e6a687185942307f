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
import { isListName, type ListName, type ListService } from '../plugins/lists/list-service.js';
import { cap, joinNames, type Lang } from './replies.js';

/** The list intents this module answers. */
export const LIST_INTENTS: ReadonlySet<string> = new Set([
  'HassShoppingListAddItem', 'HassListAddItem', 'HassShoppingListCompleteItem', 'HassListCompleteItem', 'HassListRemoveItem', 'HassListGetItems',
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
  const item = typeof s.item === 'string' ? s.item.trim() : '';
  if (!item) return zh ? '要加什么？' : 'Which item?';
  switch (intent) {
    case 'HassShoppingListAddItem':
    case 'HassListAddItem': {
      const r = lists.add(list, item);
      if (!r.added) return zh ? `${r.item.text}已经在${where}上了。` : `${cap(r.item.text)} is already on your ${where}.`;
      return zh ? `已把${r.item.text}加到${where}。` : `Added ${r.item.text} to your ${where}.`;
    }
    case 'HassListRemoveItem': {
      const r = lists.remove(list, { text: item });
      if (!r) return zh ? `${where}上没有${item}。` : `${cap(item)} is not on your ${where}.`;
      return zh ? `已把${r.text}从${where}删掉。` : `Removed ${r.text} from your ${where}.`;
    }
    case 'HassShoppingListCompleteItem':
    case 'HassListCompleteItem': {
      const r = lists.complete(list, { text: item });
      if (!r) return zh ? `${where}上没有${item}。` : `${cap(item)} is not on your ${where}.`;
      return zh ? `已把${r.text}标记为完成。` : `Ticked off ${r.text} on your ${where}.`;
    }
    default:
      return undefined;
  }
}
