/**
 * The short sentences a turn says when a reply ends early for a reason other
 * than the user's stop (issue 14: "one short honest ending"), in the
 * language of the input (src/kernel/language.ts): English, or Chinese after
 * a Chinese input. No IO here.
 */
import { detectLanguage } from './language.js';
import type { CutReason } from './turn-types.js';

/**
 * The ending said after a reply cut short for `reason`, in the language of
 * `inputText`. `maxToolCalls` is the limit named by the `tool_call_limit`
 * ending.
 */
export function cutEnding(reason: CutReason, inputText: string, maxToolCalls: number): string {
  const zh = detectLanguage(inputText) === 'zh';
  switch (reason) {
    case 'connection_lost':
      return zh ? '我和语言模型的连接在回答中途断开了。' : 'I lost the connection to my language model mid-answer.';
    case 'reply_limit':
      return zh ? '这个回答太长了，我就说到这里。' : 'That answer was too long, so I stopped it there.';
    case 'tool_call_limit':
      return zh ? `这需要一次执行超过 ${maxToolCalls} 个操作，所以我一个也没有执行。` : `That needed more than ${maxToolCalls} actions at once, so I did none of them.`;
  }
}
