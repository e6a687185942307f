/**
 * Child process of test/kernel/compaction.test.ts ("killed in the middle of a
 * compaction"): on the SQLite run log named by argv[2], compact a 12-turn
 * history once (finished), print the history shown and the window, then
 * start a second compaction whose model never answers and print "asking"
 * once its start is in the log. The parent kills this process there.
 */
import type { ContextEvent } from '../../src/kernel/memory-port.js';
import type { Provider } from '../../src/kernel/llm-types.js';
import { PromptHistory } from '../../src/kernel/prompt.js';
import { SqliteRunLog } from '../../src/kernel/run-log.js';
import { FakeProvider } from '../support/fake-provider.js';

const log = new SqliteRunLog(process.argv[2]!);
const window: ContextEvent[] = [];
for (let t = 0; t < 12; t++) {
  window.push({ id: `t${t}:user`, time: 1000 * t, kind: 'user', source: 'console', input: `Please turn on lamp number ${t} in the living room`, response: '' });
  if (t % 3 === 0) window.push({ id: `t${t}:tool:call_${t}`, time: 1000 * t, kind: 'tool', source: 'console', tool: 'device_state', input: `device_state({"device":"lamp ${t}"})`, response: `{"device":"lamp ${t}","state":"on"}` });
  window.push({ id: `t${t}:agent`, time: 1000 * t, kind: 'agent', source: 'console', input: '', response: `Lamp ${t} is on now, as you asked.` });
}
const h = new PromptHistory();
h.update(window, 1e9);
const common = { runLog: log, turn: 'child', system: { role: 'system' as const, content: 'persona' }, tools: [], summaryTokens: 100 };
await h.compact({ ...common, now: 1, provider: new FakeProvider([], { content: 'Background: lamps\nFacts: first summary' }), tailTokens: 200 });
console.log(`shown ${JSON.stringify(h.events().map((e) => e.id))}`);
console.log(`window ${JSON.stringify(window)}`);
const silent: Provider = {
  name: 'silent',
  chat: () => {
    console.log('asking');
    return new Promise(() => undefined);
  },
  // eslint-disable-next-line require-yield
  chatStream: async function* () {
    throw new Error('not used');
  },
};
void h.compact({ ...common, now: 2, provider: silent, tailTokens: 30 });
