/**
 * The limits of what one turn accepts (issue 14 "Limits"; settings
 * core.agent.max_reply_chars, max_tool_calls, max_tool_result_bytes in
 * core-settings.ts): a runaway model or tool must not fill the memory of a
 * Pi or its databases. `ReplyBudget` counts what the model writes in one LLM
 * round; `capToolResult` cuts a tool result. Pure, no IO.
 */

/** Which limit a round passed. */
export type ReplyLimit = 'reply_limit' | 'tool_call_limit';

/**
 * `text` cut to at most `n` UTF-16 units, never between the two halves of a
 * surrogate pair.
 */
export function cutAt(text: string, n: number): string {
  if (n <= 0) return '';
  if (text.length <= n) return text;
  const code = text.charCodeAt(n - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? n - 1 : n);
}

/**
 * What the model wrote in one round, against the limits: characters of
 * answer, reasoning and tool-call arguments together (`maxChars`), and tool
 * calls started (`maxCalls`, by stream index). Once `cut` is set the caller
 * stops reading the stream.
 */
export class ReplyBudget {
  /** Characters written so far. */
  used = 0;
  private readonly calls = new Set<number>();
  /** The limit passed, once one was. */
  cut?: ReplyLimit;

  constructor(
    readonly maxChars: number,
    readonly maxCalls: number,
  ) {}

  /** Tool calls started so far. */
  get toolCalls(): number {
    return this.calls.size;
  }

  /** A tool-call delta (stream `index`, argument fragment). Returns false once a limit is passed. */
  toolCall(index: number, args: string | undefined): boolean {
    this.calls.add(index);
    this.used += args?.length ?? 0;
    if (this.calls.size > this.maxCalls) this.cut = 'tool_call_limit';
    else if (this.used > this.maxChars) this.cut = 'reply_limit';
    return this.cut === undefined;
  }

  /** A text piece (answer or reasoning): the part within the limit; a piece that passes it sets `cut`. */
  text(piece: string): string {
    let text = piece;
    if (this.used + text.length > this.maxChars) {
      text = cutAt(text, this.maxChars - this.used);
      this.cut = 'reply_limit';
    }
    this.used += text.length;
    return text;
  }

  /** Why the round was cut, for logs and the outcome's `message`. */
  get message(): string {
    return this.cut === 'tool_call_limit' ? `more than ${this.maxCalls} tool calls in one round` : `the reply passed ${this.maxChars} characters`;
  }
}

/**
 * `content` when it is at most `maxBytes` bytes of UTF-8; else its first
 * `maxBytes` bytes (never half a character) and a note saying it was cut and
 * from how many bytes. `bytes` is the original size when it was cut.
 */
export function capToolResult(content: string, maxBytes: number): { text: string; bytes?: number } {
  // A UTF-16 unit is at most 3 bytes of UTF-8: short strings need no count.
  if (content.length * 3 <= maxBytes) return { text: content };
  const bytes = Buffer.byteLength(content);
  if (bytes <= maxBytes) return { text: content };
  const head = new TextDecoder().decode(Buffer.from(content.slice(0, maxBytes)).subarray(0, maxBytes)).replace(/\uFFFD$/, '');
  return { text: `${head}\n[result cut: ${bytes} bytes, only the first ${maxBytes} kept]`, bytes };
}
