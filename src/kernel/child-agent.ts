/**
 * spawn_child (seed 000 §9 "Child Agent"): a lightweight agent with its own
 * prompt (only the task), only output_send__* tools, no persistent memory, no
 * stage pipeline, at most 5 tool rounds; returns its text.
 */
import type { ChatMessage } from './llm-types.js';
import type { ToolDef } from './stage-types.js';
import type { KernelServices } from './services.js';
import { errorMessage } from './errors.js';

/** The spawn_child tool definition. */
export function spawnChildTool(k: KernelServices): ToolDef {
  return {
    name: 'spawn_child',
    description: 'Hand a sub-task to a helper agent with no memory that can only send to output channels; returns its answer. Example: {"task":"Write a two-line birthday poem for Anna"}',
    group: 'agents',
    parameters: {
      type: 'object',
      properties: { task: { type: 'string', minLength: 1, description: 'The whole task, self-contained.' } },
      required: ['task'],
      additionalProperties: false,
    },
    no_memory: true,
    handler: async (args, ctx) => runChild(k, String(args.task), ctx.signal, ctx.input),
  };
}

/** Run a child agent on `task`. Throws when no LLM is configured. */
export async function runChild(k: KernelServices, task: string, signal: AbortSignal, input: Parameters<ToolDef['handler']>[1]['input']): Promise<string> {
  const provider = k.provider();
  if (!provider) throw new Error('no LLM source is configured');
  const maxRounds = Math.min(5, k.settings.get<number>('core.child.max_tool_rounds'));
  const tools = k.tools.schemas((d) => d.name.startsWith('output_send__'));
  const messages: ChatMessage[] = [
    { role: 'system', content: `You are a helper agent with one task. Do it and answer with the result in plain text. You may only use output_send__* tools.\n\nTask: ${task}` },
    { role: 'user', content: task },
  ];
  let text = '';
  for (let round = 0; round < maxRounds; round++) {
    const resp = await provider.chat({ messages, tools }, signal);
    text = resp.content;
    if (resp.tool_calls.length === 0) return text;
    messages.push({ role: 'assistant', content: resp.content, tool_calls: resp.tool_calls });
    for (const call of resp.tool_calls) {
      const name = call.function.name;
      let content: string;
      if (!name.startsWith('output_send__')) content = `error: the child agent may only use output_send__* tools, not ${name}`;
      else {
        try {
          content = (await k.tools.execute(name, call.function.arguments, { input, signal, call_id: call.id })).content;
        } catch (err) {
          content = `error: ${errorMessage(err)}`;
        }
      }
      messages.push({ role: 'tool', tool_call_id: call.id, name, content });
    }
  }
  return text;
}
