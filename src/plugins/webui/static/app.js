// The HomeAgent WebUI: Talk, Activity, Devices, Memory, Health, Settings and Access pages over /api/v1 (openapi.json).
// preact + htm from /vendor (an import map names them); no build step.
import { Component, h, render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import { HealthPanels } from './health.js';

const html = htm.bind(h);
const API = '/api/v1';

/** A JSON API call; throws an Error with the server's message (and .status, .code) on a 4xx/5xx. */
async function api(path, opts = {}) {
  const r = await fetch(API + path, {
    method: opts.method ?? 'GET',
    headers: opts.body !== undefined ? { 'content-type': 'application/json' } : {},
    body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
    credentials: 'same-origin',
  });
  const data = await r.json().catch(() => null);
  if (!r.ok) {
    const e = new Error(data?.error ?? `${r.status} ${r.statusText}`);
    e.status = r.status;
    e.code = data?.code;
    throw e;
  }
  return data;
}

const PAGES = ['talk', 'activity', 'devices', 'memory', 'health', 'settings', 'access'];

/** The page's words in English and Chinese (issue 16: the browser's language when it is one of the two, else plugin.voice.language). */
const WORDS = {
  en: {
    talk: 'Talk', activity: 'Activity', devices: 'Devices', health: 'Health', settings: 'Settings', access: 'Access', loading: 'Loading…',
    dev_hint: 'Devices known from MQTT, with their state as it changes. A button says the command as you would: a risky device asks first, here.',
    dev_live: 'Live: states arrive as the devices report them.',
    turn_on: 'On', turn_off: 'Off', lock: 'Lock', unlock: 'Unlock', open: 'Open', close: 'Close', yes: 'Yes', no: 'No', risky: 'asks first', risky_title: 'a command to this device needs a yes (plugin.home.risky_devices; unlocking always does)', no_devices: 'No devices known (none announced on the broker yet).',
    th_name: 'name', th_room: 'room', th_type: 'type', th_state: 'state', unavailable: 'unavailable',
    embedding: 'Embeddings', emb_off: 'none configured: memory recall is lexical only', emb_unavailable: (f, why) => `${f} unavailable (${why}): lexical only`, emb_indexing: (f) => `${f}: computing in the background`, emb_ready: (f) => `${f}: ready`, emb_docs: (d, n) => `${d} of ${n} documents`,
    uptime: 'up', llm: 'LLM', broker: 'Broker', connected: 'connected', not_connected: 'NOT connected', embedded: 'embedded', plugins: 'Plugins', restart_pending: 'Changed settings waiting for a restart', problems: 'Last warnings and errors', none: 'none',
    run_checks: 'Run the checks', checking: 'Checking…', fix: 'fix',
    memory: 'Memory', mem_hint: 'What the box remembers: the people and things it knows and how they relate, what it recalled last time, the conversations and notes it keeps, what it can look up, and a search as the box does when it answers.',
    mem_docs: 'Conversations and notes', docs_hint: 'Earlier conversations the box keeps and the notes it was asked to keep, newest first.', docs_empty: 'No conversations or notes kept yet.', docs_more: 'Older',
    doc_note: 'note', doc_box: 'the box', doc_someone: 'someone',
    confirm_forget_doc: (x) => `Forget “${x}” for good? Every conversation, note and fact holding all of its words goes with it, as when someone asks the box to forget it.`,
    mem_knowledge: 'Knowledge', knowledge_hint: 'Guides and household notes the box looks things up in. Tap one to read it.', knowledge_empty: 'No knowledge documents.',
    kn_shipped: 'came with the box', kn_user: 'written here', kn_size: (b) => (b < 1024 ? `${b} bytes` : `${Math.round(b / 1024)} KB`),
    mem_graph: 'People and things remembered', graph_hint: 'Tap a name to see its facts and what it is connected to.', graph_more: (n, m) => `Showing the ${n} most mentioned of ${m}.`, graph_empty: 'Nothing remembered yet.',
    find_label: 'Find in the graph', find: 'Find', not_in_graph: (n) => `“${n}” is not in the memory.`, mentions: (n) => `${n} mention${n === 1 ? '' : 's'}`,
    facts: 'Facts', neighbours: 'Connected to', no_relations: 'No facts about it.', rename: 'Rename', edit: 'Edit', forget: 'Forget', cancel: 'Cancel',
    new_name: 'New name', relation: 'Relation', target: 'Object', type_person: 'person', type_place: 'place', type_thing: 'thing', type_other: 'other',
    confirm_rename: (n) => `Rename “${n}”? The old name stays known as another name for it.`,
    confirm_edit_rel: (f) => `Change the fact “${f}”?`,
    confirm_forget: (n) => `Forget “${n}” for good? Its facts, their earlier versions and every conversation and note naming it are removed, as when someone asks the box to forget it.`,
    last_recall: 'Recalled for the last turn', recall_for: (text, who) => `For “${text}”${who ? ` (${who})` : ''}:`, recall_none: 'Nothing from the memory was needed.', no_turn_yet: 'No turn yet.',
    recall_forgotten: 'Something of that turn was forgotten since, so it is not shown.', looked_up: 'looked up', refresh: 'Refresh',
    sec_facts: 'Known facts', sec_earlier: 'From earlier conversations', sec_waiting: 'Waiting for a yes', sec_pictures: 'Pictures', sec_knowledge: 'Notes', search: 'Search', search_label: 'Search the memory', nothing_found: 'Nothing remembered that matches.', most_mentioned: 'Most mentioned', th_score: 'score', th_when: 'when', th_text: 'text',
    says: (p) => `what you type is said by ${p}`,
    http_banner: 'Plain HTTP: push-to-talk is unavailable (browsers give the microphone only to secure pages). Set plugin.webui.https to true for it.',
    signed_out: 'You are not signed in. On the box, run <code>homeagent webui link</code> (or <code>homeagent webui link --person NAME</code>) and open the link it prints on this device. Or <a href="/login">ask the box to say a pairing code</a> aloud.',
    talk_hint: 'Type below to talk to the box. The reply appears as it is written; Stop cuts it (and the speaker).',
    ask_placeholder: 'Ask the box…', message: 'Message', send: 'Send', stop: 'Stop', stop_failed: 'Stop failed',
    ptt: 'Hold to talk', ptt_listening: 'Listening… let go to send', ptt_wait: 'Hearing…', ptt_failed: 'Push-to-talk failed', ptt_spoken: '(spoken)', not_heard: '(not understood)',
    ptt_unavailable: 'Push-to-talk needs HTTPS (plugin.webui.https) and a microphone.',
    st_interrupted: 'stopped', st_cancelled: 'stopped before it began', st_cut_short: 'cut short', st_error: 'failed',
    tool: 'tool', live: 'Live: every turn as it happens.', connecting: 'Connecting…', no_turns: 'No turns yet. Talk to the box, or type on the Talk page.',
    other_events: 'Other events', round: 'LLM round', writing: 'writing…', calls: 'calls', model_wrote: 'the model wrote', denied: '(denied)', outcome: 'outcome', cut: '(cut)',
    saw: 'What the model saw', hide_saw: 'Hide what the model saw', stopped_before: 'cancelled before it ran', stopped: 'stopped', running: 'running', done: 'done',
    filter: 'Filter settings…', filter_label: 'Filter settings', settings_hint: (n, m) => `${n} of ${m} settings. Values are checked as homeagent config set checks them; those marked “restart” apply after a restart.`,
    save: 'Save', saved: 'Saved.', not_json: 'not valid JSON', secret_set: '(set; type to replace)', secret_unset: '(not set)', restart: 'restart',
    access_hint: 'Browsers and scripts that can use this box, and links not opened yet. Make a link on the box with homeagent webui link [--person NAME].',
    th_id: 'id', th_kind: 'kind', th_person: 'person', th_used: 'last used', this_browser: '(this browser)', until: 'until',
    sign_out: 'Sign out', revoke: 'Revoke', confirm_self: 'Sign this browser out?', confirm_revoke: (id) => `Revoke ${id}? It opens nothing from now on.`,
  },
  zh: {
    talk: '对话', activity: '活动', devices: '设备', health: '状态', settings: '设置', access: '访问', loading: '加载中…',
    dev_hint: '通过 MQTT 得知的设备及其状态（随变化实时更新）。按钮就像你说出命令一样：有风险的设备会先在这里询问。',
    dev_live: '实时：设备报告状态时即显示。',
    turn_on: '开', turn_off: '关', lock: '上锁', unlock: '开锁', open: '打开', close: '关闭', yes: '是', no: '否', risky: '需确认', risky_title: '对这个设备的命令需要确认（plugin.home.risky_devices；开锁总是需要）', no_devices: '还没有已知设备（代理上尚未公布任何设备）。',
    th_name: '名称', th_room: '房间', th_type: '类型', th_state: '状态', unavailable: '不可用',
    embedding: '向量嵌入', emb_off: '未配置：记忆检索只用关键词', emb_unavailable: (f, why) => `${f} 不可用（${why}）：只用关键词`, emb_indexing: (f) => `${f}：正在后台计算`, emb_ready: (f) => `${f}：就绪`, emb_docs: (d, n) => `${n} 个文档中已完成 ${d} 个`,
    uptime: '已运行', llm: 'LLM', broker: '代理', connected: '已连接', not_connected: '未连接', embedded: '内置', plugins: '插件', restart_pending: '等待重启生效的设置', problems: '最近的警告和错误', none: '无',
    run_checks: '运行检查', checking: '检查中…', fix: '解决办法',
    memory: '记忆', mem_hint: '设备记住的内容：它知道的人和事物及其关系、上一轮对话回忆起的内容、保存的对话和笔记、可以查阅的知识，以及像设备回答时那样的搜索。',
    mem_docs: '对话和笔记', docs_hint: '设备保存的以前的对话和让它记下的笔记，最新的在前。', docs_empty: '还没有保存的对话或笔记。', docs_more: '更早的',
    doc_note: '笔记', doc_box: '设备', doc_someone: '某人',
    confirm_forget_doc: (x) => `永久忘记“${x}”？包含它全部词语的每段对话、笔记和事实都会一起删除，和有人让设备忘记它时一样。`,
    mem_knowledge: '知识库', knowledge_hint: '设备查阅的指南和家庭笔记。点一个即可阅读。', knowledge_empty: '没有知识文档。',
    kn_shipped: '随设备附带', kn_user: '在本机写入', kn_size: (b) => (b < 1024 ? `${b} 字节` : `${Math.round(b / 1024)} KB`),
    mem_graph: '记住的人和事物', graph_hint: '点一个名字，查看它的事实和与它相关的事物。', graph_more: (n, m) => `显示 ${m} 个中提到最多的 ${n} 个。`, graph_empty: '还没有记住任何内容。',
    find_label: '在图中查找', find: '查找', not_in_graph: (n) => `记忆中没有“${n}”。`, mentions: (n) => `提到 ${n} 次`,
    facts: '事实', neighbours: '相关', no_relations: '没有关于它的事实。', rename: '重命名', edit: '编辑', forget: '忘记', cancel: '取消',
    new_name: '新名称', relation: '关系', target: '对象', type_person: '人', type_place: '地点', type_thing: '事物', type_other: '其他',
    confirm_rename: (n) => `重命名“${n}”？旧名称仍作为它的别名保留。`,
    confirm_edit_rel: (f) => `修改事实“${f}”？`,
    confirm_forget: (n) => `永久忘记“${n}”？它的事实、旧版本以及提到它的每段对话和笔记都会被删除，和有人让设备忘记它时一样。`,
    last_recall: '上一轮对话回忆起的内容', recall_for: (text, who) => `针对“${text}”${who ? `（${who}）` : ''}：`, recall_none: '没有用到记忆中的内容。', no_turn_yet: '还没有对话。',
    recall_forgotten: '那一轮对话的部分内容已被忘记，因此不再显示。', looked_up: '查询', refresh: '刷新',
    sec_facts: '已知事实', sec_earlier: '以前的对话', sec_waiting: '等待确认', sec_pictures: '图片', sec_knowledge: '笔记', search: '搜索', search_label: '搜索记忆', nothing_found: '没有记住相关的内容。', most_mentioned: '提到最多', th_score: '得分', th_when: '时间', th_text: '内容',
    says: (p) => `你输入的内容以 ${p} 的身份说出`,
    http_banner: '纯 HTTP：按键说话不可用（浏览器只在安全页面上提供麦克风）。将 plugin.webui.https 设为 true 即可使用。',
    signed_out: '你尚未登录。在设备上运行 <code>homeagent webui link</code>（或 <code>homeagent webui link --person 姓名</code>），然后在本设备上打开它打印的链接。或者<a href="/login">请设备读出配对码</a>。',
    talk_hint: '在下方输入，与设备对话。回复会边写边显示；“停止”会打断它（以及扬声器）。',
    ask_placeholder: '问问设备…', message: '消息', send: '发送', stop: '停止', stop_failed: '停止失败',
    ptt: '按住说话', ptt_listening: '正在听…松开即发送', ptt_wait: '正在识别…', ptt_failed: '按键说话失败', ptt_spoken: '（语音）', not_heard: '（没听懂）',
    ptt_unavailable: '按键说话需要 HTTPS（plugin.webui.https）和麦克风。',
    st_interrupted: '已停止', st_cancelled: '开始前已停止', st_cut_short: '被截断', st_error: '失败',
    tool: '工具', live: '实时：每一轮对话发生时即显示。', connecting: '连接中…', no_turns: '还没有对话。对设备说话，或在“对话”页输入。',
    other_events: '其他事件', round: 'LLM 轮次', writing: '正在写…', calls: '调用', model_wrote: '模型写了', denied: '（被拒绝）', outcome: '结果', cut: '（被打断）',
    saw: '模型看到了什么', hide_saw: '隐藏模型看到的内容', stopped_before: '运行前已取消', stopped: '已停止', running: '进行中', done: '完成',
    filter: '筛选设置…', filter_label: '筛选设置', settings_hint: (n, m) => `显示 ${m} 项设置中的 ${n} 项。取值的检查与 homeagent config set 相同；标有“需重启”的设置在重启后生效。`,
    save: '保存', saved: '已保存。', not_json: '不是有效的 JSON', secret_set: '（已设置；输入以替换）', secret_unset: '（未设置）', restart: '需重启',
    access_hint: '可以使用本设备的浏览器和脚本，以及尚未打开的链接。在设备上用 homeagent webui link [--person 姓名] 生成链接。',
    th_id: 'ID', th_kind: '类型', th_person: '人', th_used: '最近使用', this_browser: '（本浏览器）', until: '有效至',
    sign_out: '退出登录', revoke: '撤销', confirm_self: '让本浏览器退出登录？', confirm_revoke: (id) => `撤销 ${id}？此后它将无法再打开。`,
  },
};

/** The page's language: the browser's first language when it is English or Chinese, else the box's (plugin.voice.language). */
function pickLanguage(boxLanguage) {
  const first = (navigator.languages?.[0] ?? navigator.language ?? '').toLowerCase();
  if (first.startsWith('zh')) return 'zh';
  if (first.startsWith('en')) return 'en';
  return boxLanguage === 'zh' ? 'zh' : 'en';
}

let L = WORDS.en;
/** A word of the page in its language. */
const t = (key, ...args) => {
  const w = L[key] ?? WORDS.en[key] ?? key;
  return typeof w === 'function' ? w(...args) : w;
};

function currentPage() {
  const p = location.hash.replace(/^#\/?/, '');
  return PAGES.includes(p) ? p : 'talk';
}

function App() {
  const [page, setPage] = useState(currentPage());
  const [session, setSession] = useState(undefined);
  useEffect(() => {
    const on = () => setPage(currentPage());
    addEventListener('hashchange', on);
    api('/session').then(setSession, (e) => setSession(e.status === 401 ? null : { error: e.message }));
    return () => removeEventListener('hashchange', on);
  }, []);
  if (session === undefined) return html`<p class="loading">${t('loading')}</p>`;
  if (session === null) return html`<${SignedOut} />`;
  return html`
    <header>
      <strong class="brand">HomeAgent</strong>
      <nav>${PAGES.map((id) => html`<a href="#/${id}" class=${page === id ? 'active' : ''} aria-current=${page === id ? 'page' : undefined}>${t(id)}</a>`)}</nav>
      ${session.person ? html`<span class="who" title=${t('says', session.person)}>${session.person}</span>` : null}
    </header>
    ${session.https === false ? html`<p class="banner">${t('http_banner')}</p>` : null}
    <main>
      ${page === 'talk' ? html`<${Talk} />` : page === 'activity' ? html`<${Activity} />` : page === 'devices' ? html`<${Devices} />` : page === 'memory' ? html`<${Memory} />` : page === 'health' ? html`<${Health} />` : page === 'settings' ? html`<${Settings} />` : html`<${Access} session=${session} />`}
    </main>`;
}

function SignedOut() {
  return html`<main class="login">
    <h1>HomeAgent</h1>
    <p dangerouslySetInnerHTML=${{ __html: t('signed_out') }}></p>
  </main>`;
}

// ---- Talk ----------------------------------------------------------------------------------------------------------

/** Reads an NDJSON response body line by line. */
async function* ndjson(response) {
  const reader = response.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i).trim();
      buf = buf.slice(i + 1);
      if (line) yield JSON.parse(line);
    }
  }
  if (buf.trim()) yield JSON.parse(buf);
}

/**
 * Push-to-talk: while held, the microphone's audio goes to /api/v1/voice as 16 kHz mono s16le frames
 * (ptt-worklet.js); on release (plus 400 ms, as people let go early) {"type":"end"}. `onResult` gets the
 * box's answer, `onAudio` the spoken reply (a WAV). Only in a secure context (HTTPS) with a microphone.
 */
class Ptt {
  constructor(onResult, onAudio, onError, onSent) {
    Object.assign(this, { onResult, onAudio, onError, onSent, ws: null, ctx: null, stream: null, node: null, sentSamples: 0 });
  }
  static available() {
    return window.isSecureContext && !!navigator.mediaDevices?.getUserMedia && typeof AudioWorkletNode !== 'undefined';
  }
  socket() {
    if (this.ws && this.ws.readyState <= 1) return Promise.resolve(this.ws);
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${API}/voice`);
      ws.binaryType = 'arraybuffer';
      ws.onmessage = (m) => {
        if (typeof m.data !== 'string') return this.onAudio(m.data);
        const msg = JSON.parse(m.data);
        if (msg.type === 'result') this.onResult(msg);
        else if (msg.type === 'error') this.onError(msg.error);
      };
      ws.onopen = () => resolve(ws);
      ws.onerror = () => reject(new Error('the push-to-talk connection failed'));
      this.ws = ws;
    });
  }
  async start() {
    const ws = await this.socket();
    // No automatic gain: the browser's raised a quiet recording by about 20 dB until it clipped, and the recogniser
    // heard "don't lock the front door" / "he lock the front door" (a not-command opening: nothing was done).
    this.stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: false } });
    try {
      this.ctx = new AudioContext({ sampleRate: 16000 });
    } catch {
      this.ctx = new AudioContext();
    }
    await this.ctx.audioWorklet.addModule('/static/ptt-worklet.js');
    this.node = new AudioWorkletNode(this.ctx, 'ptt-capture');
    this.sentSamples = 0;
    this.node.port.onmessage = (e) => {
      if (e.data === 'flushed') return this.flushed?.();
      ws.send(e.data);
      this.sentSamples += e.data.byteLength / 2;
      this.onSent(Math.round(this.sentSamples / 16));
    };
    this.ctx.createMediaStreamSource(this.stream).connect(this.node);
  }
  async end() {
    await new Promise((r) => setTimeout(r, 400));
    if (this.node) await new Promise((r) => ((this.flushed = r), this.node.port.postMessage('flush')));
    this.stream?.getTracks().forEach((tr) => tr.stop());
    await this.ctx?.close();
    this.node = this.ctx = this.stream = null;
    this.ws?.send(JSON.stringify({ type: 'end' }));
  }
}

const STATUS_KEYS = { interrupted: 'st_interrupted', cancelled: 'st_cancelled', cut_short: 'st_cut_short', error: 'st_error' };

function Talk() {
  const [messages, setMessages] = useState([]);
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const list = useRef(null);
  useEffect(() => {
    if (list.current) list.current.scrollTop = list.current.scrollHeight;
  }, [messages]);

  const update = (id, fn) => setMessages((ms) => ms.map((m) => (m.id === id ? fn(m) : m)));

  // Push-to-talk: one recording at a time; its two messages are filled in when the box answers.
  const [ptt, setPtt] = useState('idle'); // idle | listening | waiting
  const [sentMs, setSentMs] = useState(0);
  const pending = useRef(null);
  const pttRef = useRef(null);
  if (!pttRef.current && Ptt.available())
    pttRef.current = new Ptt(
      (r) => {
        const id = pending.current;
        if (id === null) return;
        update(id - 1, (m) => ({ ...m, text: `${r.transcript || t('not_heard')} ${t('ptt_spoken')}` }));
        update(id, (m) => ({ ...m, output: r.reply, status: r.status === 'cancelled' ? 'cancelled' : r.rejected ? 'done' : r.status === 'error' ? 'error' : 'done', tools: (r.actions ?? []).map((a) => ({ name: a, arguments: undefined, result: '', is_error: false, action: true })) }));
        pending.current = null;
        setPtt('idle');
      },
      (wav) => {
        const audio = new Audio(URL.createObjectURL(new Blob([wav], { type: 'audio/wav' })));
        audio.play().catch(() => undefined);
      },
      (message) => {
        setError(`${t('ptt_failed')}: ${message}`);
        if (pending.current !== null) update(pending.current, (m) => ({ ...m, status: 'error', error: message }));
        pending.current = null;
        setPtt('idle');
      },
      setSentMs,
    );
  async function pttDown(ev) {
    ev.preventDefault();
    if (ptt !== 'idle' || busy) return;
    setError('');
    setSentMs(0);
    setPtt('listening');
    try {
      await pttRef.current.start();
    } catch (err) {
      setError(`${t('ptt_failed')}: ${err.message}`);
      setPtt('idle');
    }
  }
  async function pttUp() {
    if (ptt !== 'listening') return;
    setPtt('waiting');
    const id = Date.now() + Math.random();
    pending.current = id;
    setMessages((ms) => [...ms, { id: id - 1, who: 'you', text: '…' }, { id, who: 'box', rounds: [], tools: [], output: '', status: 'writing' }]);
    try {
      await pttRef.current.end();
    } catch (err) {
      setError(`${t('ptt_failed')}: ${err.message}`);
      setPtt('idle');
    }
  }

  async function send(ev) {
    ev.preventDefault();
    const q = text.trim();
    if (!q || busy) return;
    setText('');
    setError('');
    setBusy(true);
    const id = Date.now() + Math.random();
    setMessages((ms) => [...ms, { id: id - 1, who: 'you', text: q }, { id, who: 'box', rounds: [], tools: [], output: '', status: 'writing' }]);
    try {
      const r = await fetch(`${API}/conversation/ask`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: q }), credentials: 'same-origin' });
      if (!r.ok) {
        const e = await r.json().catch(() => ({}));
        throw new Error(e.error ?? r.statusText);
      }
      for await (const line of ndjson(r)) {
        if (line.type === 'delta') {
          update(id, (m) => {
            const rounds = [...m.rounds];
            rounds[line.round - 1] = (rounds[line.round - 1] ?? '') + line.text;
            return { ...m, rounds };
          });
        } else if (line.type === 'tool') {
          update(id, (m) => ({ ...m, tools: [...m.tools, line] }));
        } else if (line.type === 'output' && (line.kind === 'full' || line.kind === 'end')) {
          update(id, (m) => ({ ...m, output: line.content }));
        } else if (line.type === 'done') {
          update(id, (m) => ({ ...m, status: line.result.status, reply: line.result.reply, error: line.result.error }));
        }
      }
    } catch (err) {
      update(id, (m) => ({ ...m, status: 'error', error: err.message }));
    } finally {
      setBusy(false);
    }
  }

  async function stop() {
    try {
      await api('/conversation/stop', { method: 'POST', body: {} });
    } catch (err) {
      setError(`${t('stop_failed')}: ${err.message}`);
    }
  }

  return html`<section class="talk">
    <div class="messages" ref=${list} aria-live="polite">
      ${messages.length === 0 ? html`<p class="hint">${t('talk_hint')}</p>` : null}
      ${messages.map((m) => (m.who === 'you' ? html`<div class="msg you">${m.text}</div>` : html`<${Reply} m=${m} />`))}
    </div>
    ${error ? html`<p class="error">${error}</p>` : null}
    <form class="composer" onSubmit=${send}>
      <input name="text" autocomplete="off" placeholder=${t('ask_placeholder')} value=${text} onInput=${(e) => setText(e.currentTarget.value)} aria-label=${t('message')} />
      <button type="submit" disabled=${busy || !text.trim()}>${t('send')}</button>
      <button type="button" class="stop" onClick=${stop} disabled=${!busy && ptt !== 'waiting'}>${t('stop')}</button>
    </form>
    ${pttRef.current
      ? html`<button type="button" class="ptt ${ptt}" data-sent-ms=${sentMs} onPointerDown=${pttDown} onPointerUp=${pttUp} onPointerLeave=${pttUp} onPointerCancel=${pttUp} onContextMenu=${(e) => e.preventDefault()} disabled=${busy || ptt === 'waiting'}>${ptt === 'listening' ? t('ptt_listening') : ptt === 'waiting' ? t('ptt_wait') : t('ptt')}</button>`
      : html`<p class="hint">${t('ptt_unavailable')}</p>`}
  </section>`;
}

function Reply({ m }) {
  // The model's text as it is written; when nothing was streamed (a local command, a short answer), what was delivered.
  const written = m.rounds.filter(Boolean).join('\n\n');
  const shown = written || m.output || m.reply || '';
  const note = STATUS_KEYS[m.status] ? t(STATUS_KEYS[m.status]) : undefined;
  return html`<div class="msg box ${m.status === 'writing' ? 'writing' : ''}" data-status=${m.status}>
    <div class="text">${shown}${m.status === 'writing' ? html`<span class="cursor">▍</span>` : null}</div>
    ${m.tools.map((c) => (c.action ? html`<div class="tool"><code>${c.name}</code></div>` : html`<div class="tool ${c.is_error ? 'err' : ''}">${t('tool')} <code>${c.name}(${JSON.stringify(c.arguments)})</code> → ${String(c.result).slice(0, 300)}</div>`))}
    ${note ? html`<div class="status">(${note}${m.error ? `: ${m.error}` : ''})</div>` : null}
  </div>`;
}

// ---- Activity ------------------------------------------------------------------------------------------------------

const MAX_TURNS = 50;

/** Folds one activity event into the turns (newest first), keeping at most MAX_TURNS. */
function fold(turns, ev) {
  const p = ev.payload ?? {};
  const id = ev.type === 'raw_input' ? p.id : p.turn;
  if (!id) return { turns, other: ev };
  const i = turns.findIndex((t) => t.id === id);
  const t = i >= 0 ? { ...turns[i] } : { id, at: ev.at, rounds: {}, tools: {}, outputs: [], events: 0 };
  t.events++;
  switch (ev.type) {
    case 'raw_input':
    case 'turn.started': {
      const input = ev.type === 'raw_input' ? p : p.input;
      t.input = input;
      break;
    }
    case 'llm.delta': {
      const r = t.rounds[p.round] ?? { text: '', calls: [] };
      if (p.kind === 'content') t.rounds = { ...t.rounds, [p.round]: { ...r, text: r.text + p.text, live: true } };
      break;
    }
    case 'llm.completed': {
      const msg = p.response?.message ?? p.response ?? {};
      t.rounds = { ...t.rounds, [p.round]: { text: msg.content ?? '', calls: msg.tool_calls ?? [], duration_ms: p.duration_ms, model: msg.model, done: true } };
      break;
    }
    case 'tool.pre_execute':
    case 'tool.executed':
      t.tools = { ...t.tools, [p.call_id]: { ...(t.tools[p.call_id] ?? {}), ...p, done: ev.type === 'tool.executed' } };
      break;
    case 'output':
      if (p.kind !== 'sentence') t.outputs = [...t.outputs, p];
      break;
    case 'turn.interrupted':
      t.interrupted = p.cancelled ? 'stopped_before' : 'stopped';
      break;
    case 'error':
      t.error = `${p.where}: ${p.message}`;
      break;
    case 'turn.finished':
      t.outcome = p.outcome;
      t.status = p.status;
      t.said = p.said;
      break;
    case 'turn.private': {
      // Another person's turn found private part way: what was shown of it goes (the server masks what follows).
      const hide = (s) => (s ? '[private]' : s);
      if (t.input) t.input = { ...t.input, text: p.text };
      t.rounds = Object.fromEntries(Object.entries(t.rounds).map(([n, r]) => [n, { ...r, text: hide(r.text), calls: (r.calls ?? []).map((c) => ({ ...c, function: { ...c.function, arguments: {} }, arguments: {} })) }]));
      t.tools = Object.fromEntries(Object.entries(t.tools).map(([k, c]) => [k, { ...c, arguments: {}, result: hide(c.result) }]));
      t.outputs = t.outputs.map((o) => ({ ...o, content: hide(o.content) }));
      if (t.said) t.said = '[private]';
      break;
    }
  }
  const next = i >= 0 ? turns.map((x, j) => (j === i ? t : x)) : [t, ...turns];
  return { turns: next.slice(0, MAX_TURNS) };
}

/** How often the Activity page redraws at most (ms): events arriving meanwhile are folded in together. */
const ACTIVITY_FRAME_MS = 200;

function Activity() {
  const [turns, setTurns] = useState([]);
  const [other, setOther] = useState([]);
  const [connected, setConnected] = useState(false);
  useEffect(() => {
    const es = new EventSource(`${API}/events?deltas=1`);
    // Events are folded in batches, at most every ACTIVITY_FRAME_MS and only while the page is visible:
    // a reply streaming token by token redraws a few times a second, not once per token.
    let pending = [];
    let timer = 0;
    const flush = () => {
      timer = 0;
      if (document.visibilityState !== 'visible') return void (timer = setTimeout(flush, 1000));
      const batch = pending;
      pending = [];
      setTurns((ts) => {
        let cur = ts;
        const others = [];
        for (const ev of batch) {
          const r = fold(cur, ev);
          cur = r.turns;
          if (r.other && r.other.type !== 'assistant_state') others.push(r.other);
        }
        if (others.length) setOther((o) => [...others.reverse(), ...o].slice(0, 30));
        return cur;
      });
    };
    es.onopen = () => setConnected(true);
    es.onerror = () => setConnected(false);
    es.onmessage = (m) => {
      pending.push(JSON.parse(m.data));
      if (!timer) timer = setTimeout(flush, ACTIVITY_FRAME_MS);
    };
    return () => {
      clearTimeout(timer);
      es.close();
    };
  }, []);
  return html`<section class="activity">
    <p class="hint">${connected ? t('live') : t('connecting')}</p>
    ${turns.length === 0 ? html`<p class="hint">${t('no_turns')}</p>` : null}
    ${turns.map((x) => html`<${Turn} turn=${x} key=${x.id} />`)}
    ${other.length ? html`<h3>${t('other_events')}</h3><ul class="events">${other.map((e) => html`<li><time>${new Date(e.at).toLocaleTimeString()}</time> <b>${e.type}</b> <code>${JSON.stringify(e.payload)}</code></li>`)}</ul>` : null}
  </section>`;
}

/** A duration for people: whole ms, or seconds with one decimal. */
function ms(v) {
  if (typeof v !== 'number') return '';
  return v < 1000 ? `${Math.round(v)} ms` : `${(v / 1000).toFixed(1)} s`;
}

/** A turn's card; redrawn only when that turn changed (fold keeps every other turn's object as it was). */
class Turn extends Component {
  shouldComponentUpdate(next) {
    return next.turn !== this.props.turn;
  }
  render({ turn }) {
    return html`<${TurnCard} turn=${turn} />`;
  }
}

function TurnCard({ turn: tr }) {
  const rounds = Object.entries(tr.rounds).sort((a, b) => Number(a[0]) - Number(b[0]));
  const tools = Object.values(tr.tools);
  const state = tr.status ?? (tr.interrupted ? 'stopped' : 'running');
  const stateText = { done: t('done'), short_circuit: t('done'), interrupted: t('st_interrupted'), cancelled: t('st_cancelled'), cut_short: t('st_cut_short'), error: t('st_error'), stopped: t('stopped'), running: t('running') }[state] ?? state;
  return html`<article class="turn" data-status=${state}>
    <header>
      <time>${new Date(tr.at).toLocaleTimeString()}</time>
      <span class="badge ${state}">${stateText}</span>
      ${tr.input ? html`<span class="src">${tr.input.source} → ${tr.input.channel}${tr.input.user ? ` · ${tr.input.user}` : ''}</span>` : null}
    </header>
    ${tr.input ? html`<p class="input">“${tr.input.text}”</p>` : null}
    ${rounds.map(([n, r]) => html`<div class="round">
      <div class="round-h">${t('round')} ${n}${r.model ? ` · ${r.model}` : ''}${r.duration_ms !== undefined ? ` · ${ms(r.duration_ms)}` : r.live ? ` · ${t('writing')}` : ''}</div>
      ${r.text ? html`<div class="text">${r.text}</div>` : null}
      ${(r.calls ?? []).map((c) => html`<div class="call">${t('calls')} <code>${c.function?.name ?? c.name}(${JSON.stringify(c.function?.arguments ?? c.arguments)})</code></div>`)}
      ${r.done ? html`<${ModelSaw} turn=${tr.id} round=${n} />` : null}
    </div>`)}
    ${tools.map((c) => html`<div class="tool ${c.is_error ? 'err' : ''}">${t('tool')} <code>${c.name}(${JSON.stringify(c.arguments)})</code>${c.done ? html` → ${c.denied ? `${t('denied')} ` : ''}<span class="result">${String(c.result).slice(0, 500)}</span> <small>${ms(c.duration_ms)}</small>` : ' …'}</div>`)}
    ${tr.outputs.map((o) => html`<div class="out">→ ${o.channel}: ${o.content}${o.interrupted ? ` ${t('cut')}` : ''}</div>`)}
    ${rounds.length === 0 && tr.said ? html`<div class="round"><div class="round-h">${t('model_wrote')}</div><div class="text">${tr.said}</div></div>` : null}
    ${tr.interrupted ? html`<div class="interrupt">■ ${t(tr.interrupted)}</div>` : null}
    ${tr.error ? html`<div class="error">${tr.error}</div>` : null}
    ${tr.outcome ? html`<div class="outcome">${t('outcome')}: <b>${tr.outcome.kind}</b>${tr.outcome.reason ? ` (${tr.outcome.reason})` : ''}</div>` : null}
  </article>`;
}

/** "What the model saw" in one round: the message list rebuilt from the run log, on demand. */
function ModelSaw({ turn, round }) {
  const [messages, setMessages] = useState(null);
  const [error, setError] = useState('');
  async function toggle() {
    if (messages) return setMessages(null);
    try {
      setMessages((await api(`/turns/${encodeURIComponent(turn)}/context?round=${round}`)).messages);
    } catch (e) {
      setError(e.message);
    }
  }
  return html`<div class="saw">
    <button type="button" class="link" onClick=${toggle}>${messages ? t('hide_saw') : t('saw')}</button>
    ${error ? html`<span class="error"> ${error}</span>` : null}
    ${messages ? html`<ol class="context">${messages.map((m) => html`<li class="role-${m.role}"><b>${m.role}</b>${m.tool_calls?.length ? html` <code>${m.tool_calls.map((c) => `${c.function?.name}(${JSON.stringify(c.function?.arguments)})`).join(', ')}</code>` : null}<div class="text">${m.content}</div></li>`)}</ol>` : null}
  </div>`;
}

// ---- Devices -------------------------------------------------------------------------------------------------------

/** A device's state in a few words (brightness and positions in percent, as `homeagent devices` shows them). */
function stateText(d) {
  if (d.available === false) return t('unavailable');
  const st = d.state ?? {};
  const parts = [];
  if (st.state !== undefined) parts.push(String(st.state));
  if (typeof st.brightness === 'number') parts.push(`${Math.round((st.brightness / 255) * 100)}%`);
  if (typeof st.position === 'number') parts.push(`${st.position}%`);
  for (const k of ['temperature', 'current_temperature', 'humidity', 'mode', 'value']) if (st[k] !== undefined) parts.push(`${k.replace('_', ' ')} ${st[k]}`);
  return parts.join(', ') || '-';
}

/** Ask the box `text` on the Talk channel (the same path as a spoken command) and resolve with the turn's result. */
async function askText(text) {
  const r = await fetch(`${API}/conversation/ask`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text }), credentials: 'same-origin' });
  if (!r.ok) throw new Error((await r.json().catch(() => ({}))).error ?? r.statusText);
  let result = null;
  for await (const line of ndjson(r)) if (line.type === 'done') result = line.result;
  return result ?? { reply: '', status: 'error' };
}

/** The controls of a device: [label key, the command said for it]. Only what a spoken command does. */
function controlsOf(d) {
  const n = d.name;
  switch (d.component) {
    case 'light':
    case 'switch':
    case 'fan':
      return [['turn_on', `turn on the ${n}`], ['turn_off', `turn off the ${n}`]];
    case 'lock':
      return [['lock', `lock the ${n}`], ['unlock', `unlock the ${n}`]];
    case 'cover':
      return [['open', `open the ${n}`], ['close', `close the ${n}`]];
    default:
      return [];
  }
}

/** The Devices page: the devices from GET /devices, then their state live from GET /events?stream=devices (pushed as MQTT reports it). */
function Devices() {
  const [rows, setRows] = useState(null);
  const [risky, setRisky] = useState([]);
  const [error, setError] = useState('');
  const [live, setLive] = useState(false);
  const [answer, setAnswer] = useState(null); // { device, reply, status, asking }
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    let alive = true;
    const load = () => api('/devices').then((r) => alive && (setRows(r), setError('')), (e) => alive && setError(e.message));
    api('/settings/plugin.home.risky_devices').then((s) => alive && setRisky(Array.isArray(s.value) ? s.value : []), () => undefined);
    // The list once the stream is open (nothing reported meanwhile is missed), again after a reconnect or when devices come or go.
    const es = new EventSource(`${API}/events?stream=devices`);
    es.onopen = () => {
      setLive(true);
      load();
    };
    es.onerror = () => setLive(false);
    es.onmessage = (m) => {
      const ev = JSON.parse(m.data);
      if (ev.type === 'plugin.home.devices') return void load();
      if (ev.type !== 'plugin.home.state') return;
      const d = ev.payload;
      setRows((rs) => {
        if (!rs) return rs;
        if (rs.some((x) => x.id === d.id)) return rs.map((x) => (x.id === d.id ? { ...x, ...d, changed_at: ev.at } : x));
        // A device the page has not listed yet: the list again.
        queueMicrotask(load);
        return rs;
      });
    };
    return () => {
      alive = false;
      es.close();
    };
  }, []);
  // A control says the command as a person would: local commands, the confirmation of a risky device (asked here), never MQTT directly.
  async function say(device, text) {
    setBusy(true);
    setAnswer({ device, reply: '…', status: 'writing' });
    try {
      const r = await askText(text);
      setAnswer({ device, reply: r.reply || r.error || '', status: r.status, asking: /\?\s*(please say yes or no\.?)?\s*$/i.test(r.reply) || /yes or no|是还是不是|是否|吗？/i.test(r.reply) });
    } catch (e) {
      setAnswer({ device, reply: e.message, status: 'error' });
    } finally {
      setBusy(false);
    }
  }
  const isRisky = (d) => d.component === 'lock' || d.component === 'alarm_control_panel' || risky.includes(d.id) || risky.includes(d.name);
  return html`<section class="devices">
    <p class="hint">${t('dev_hint')}</p>
    <p class="hint live-state" data-live=${live ? 'yes' : 'no'}>${live ? t('dev_live') : t('connecting')}</p>
    ${error ? html`<p class="error">${error}</p>` : null}
    ${answer ? html`<div class="answer" role="status" data-status=${answer.status}>
      <b>${answer.device}:</b> ${answer.reply}
      ${answer.asking ? html`<span class="yesno"><button type="button" onClick=${() => say(answer.device, 'yes')} disabled=${busy}>${t('yes')}</button><button type="button" onClick=${() => say(answer.device, 'no')} disabled=${busy}>${t('no')}</button></span>` : null}
    </div>` : null}
    ${!rows ? html`<p class="loading">${t('loading')}</p>` : rows.length === 0 ? html`<p class="hint">${t('no_devices')}</p>` : html`<table>
      <thead><tr><th>${t('th_name')}</th><th class="room">${t('th_room')}</th><th>${t('th_state')}</th><th></th></tr></thead>
      <tbody>${rows.map((d) => html`<tr class=${d.available === false ? 'off' : ''} data-id=${d.id} data-changed=${d.changed_at ?? ''} key=${d.id}>
        <td>${d.name}${isRisky(d) ? html` <span class="risky" title=${t('risky_title')}>${t('risky')}</span>` : null}<div class="sub">${d.component}<span class="room-inline">${d.area ? ` · ${d.area}` : ''}</span></div></td>
        <td class="room">${d.area ?? ''}</td>
        <td class="state">${stateText(d)}</td>
        <td class="controls">${controlsOf(d).map(([k, text]) => html`<button type="button" disabled=${busy || d.available === false} onClick=${() => say(d.name, text)}>${t(k)}</button>`)}</td>
      </tr>`)}</tbody>
    </table>`}
  </section>`;
}

// ---- Memory --------------------------------------------------------------------------------------------------------

/** The graph's module (memory-graph.js) and the lists' (memory-lists.js), loaded the first time the Memory page opens: not part of the first page load. */
let graphModule;
const loadGraph = () => (graphModule ??= import('./memory-graph.js'));
let listsModule;
const loadLists = () => (listsModule ??= import('./memory-lists.js'));

/** The Memory page: the graph to explore, edit and forget in; what was recalled for the last turn; the documents and the knowledge base; a search; the numbers. */
function Memory() {
  const [stats, setStats] = useState(null);
  const [q, setQ] = useState('');
  const [found, setFound] = useState(null);
  const [error, setError] = useState('');
  const [Graph, setGraph] = useState(null);
  const [lists, setLists] = useState(null);
  const [version, setVersion] = useState(0);
  const [docsVersion, setDocsVersion] = useState(0);
  useEffect(() => {
    api('/memory/stats').then(setStats, (e) => setError(e.message));
    loadGraph().then((m) => setGraph(() => m.MemoryGraph), (e) => setError(e.message));
    loadLists().then((m) => setLists({ Documents: m.MemoryDocuments, Knowledge: m.MemoryKnowledge }), (e) => setError(e.message));
  }, []);
  async function search(ev) {
    ev?.preventDefault();
    if (!q.trim()) return;
    setError('');
    try {
      setFound(await api(`/memory/recall?q=${encodeURIComponent(q.trim())}`));
    } catch (e) {
      setError(e.message);
    }
  }
  // After an edit or a forgetting: the numbers, the last recall, the documents and the search answer again (the
  // document list reloads itself after its own forgetting, keeping its note of what was forgotten).
  function changed(fromDocuments = false) {
    api('/memory/stats').then(setStats, (e) => setError(e.message));
    setVersion((v) => v + 1);
    if (!fromDocuments) setDocsVersion((v) => v + 1);
    if (found) void search();
  }
  const counts = stats ? Object.entries(stats).filter(([k, v]) => k !== 'top_entities' && (typeof v === 'number' || typeof v === 'string')) : [];
  return html`<section class="memory">
    <p class="hint">${t('mem_hint')}</p>
    ${error ? html`<p class="error">${error}</p>` : null}
    <h2>${t('mem_graph')}</h2>
    ${Graph ? html`<${Graph} api=${api} t=${t} onChanged=${changed} />` : html`<p class="loading">${t('loading')}</p>`}
    <h2>${t('last_recall')}</h2>
    <${LastRecall} key=${version} />
    <h2>${t('mem_docs')}</h2>
    ${lists ? html`<${lists.Documents} key=${docsVersion} api=${api} t=${t} onChanged=${() => changed(true)} />` : html`<p class="loading">${t('loading')}</p>`}
    <h2>${t('mem_knowledge')}</h2>
    ${lists ? html`<${lists.Knowledge} api=${api} t=${t} />` : html`<p class="loading">${t('loading')}</p>`}
    <h2>${t('search')}</h2>
    <form class="composer" onSubmit=${search}>
      <input type="search" value=${q} onInput=${(e) => setQ(e.currentTarget.value)} aria-label=${t('search_label')} placeholder=${t('search_label')} />
      <button type="submit" disabled=${!q.trim()}>${t('search')}</button>
    </form>
    ${found ? (found.length === 0 ? html`<p class="hint">${t('nothing_found')}</p>` : html`<table class="found"><thead><tr><th>${t('th_score')}</th><th>${t('th_when')}</th><th>${t('th_text')}</th></tr></thead><tbody>
      ${found.map((m) => html`<tr><td>${typeof m.score === 'number' ? m.score.toFixed(2) : ''}</td><td>${m.time ? new Date(m.time).toLocaleDateString() : ''}<div class="sub">${m.kind ?? ''}</div></td><td>${m.text}</td></tr>`)}
    </tbody></table>`) : null}
    ${stats ? html`<dl class="stats">${counts.map(([k, v]) => html`<dt>${k.replace(/_/g, ' ')}</dt><dd>${String(v)}</dd>`)}</dl>
      ${stats.top_entities?.length ? html`<p><b>${t('most_mentioned')}:</b> ${stats.top_entities.map((e) => `${e.name} (${e.type}, ${e.mention_count})`).join(', ')}</p>` : null}` : html`<p class="loading">${t('loading')}</p>`}
  </section>`;
}

/** The memory block's section titles (as the model reads them) in the page's words. */
function sectionTitle(title) {
  const keys = [['[Known facts]', 'sec_facts'], ['[Recalled from earlier conversations]', 'sec_earlier'], ['[Waiting for a yes]', 'sec_waiting'], ['[Pictures', 'sec_pictures'], ['[Knowledge]', 'sec_knowledge']];
  const k = keys.find(([prefix]) => title.startsWith(prefix));
  return k ? t(k[1]) : title.replace(/^\[|\]$/g, '');
}

/** What the memory gave the last turn (GET /memory/recalled), again whenever a turn finishes (the activity stream). */
function LastRecall() {
  const [r, setR] = useState(null);
  const [error, setError] = useState('');
  useEffect(() => {
    let alive = true;
    const load = () => api('/memory/recalled').then((x) => alive && (setR(x), setError('')), (e) => alive && setError(e.message));
    load();
    const es = new EventSource(`${API}/events?backlog=0`);
    es.onmessage = (m) => JSON.parse(m.data).type === 'turn.finished' && load();
    return () => {
      alive = false;
      es.close();
    };
  }, []);
  if (error) return html`<p class="error">${error}</p>`;
  if (!r) return html`<p class="loading">${t('loading')}</p>`;
  if (r.turn === null) return html`<p class="hint recalled">${t('no_turn_yet')}</p>`;
  return html`<div class="recalled" data-turn=${r.turn}>
    <p>${t('recall_for', r.text ?? '', r.speaker)} ${r.at ? html`<time class="sub">${new Date(r.at).toLocaleString()}</time>` : null}</p>
    ${r.forgotten ? html`<p class="hint">${t('recall_forgotten')}</p>` : r.sections.length === 0 && r.tools.length === 0 ? html`<p class="hint">${t('recall_none')}</p>` : null}
    ${r.sections.map((sec) => html`<h4>${sectionTitle(sec.title)}</h4><ul>${sec.items.map((i) => html`<li>${i}</li>`)}</ul>`)}
    ${r.tools.map((c) => html`<div class="tool">${t('looked_up')} <code>${c.name}(${JSON.stringify(c.arguments)})</code> → ${c.result.slice(0, 300)}</div>`)}
  </div>`;
}

// ---- Health --------------------------------------------------------------------------------------------------------

function duration(s) {
  const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
  return d ? `${d}d ${h}h` : h ? `${h}h ${m}m` : `${m}m ${s % 60}s`;
}

/** The embeddings line of the Health page (status.embeddings: off, indexing with progress, ready, or unavailable; issue 19). */
function embeddingText(e) {
  if (e.state === 'off') return t('emb_off');
  if (e.state === 'unavailable') return t('emb_unavailable', e.fingerprint, e.reason ?? '?');
  return e.state === 'indexing' ? t('emb_indexing', e.fingerprint) : t('emb_ready', e.fingerprint);
}

function Health() {
  const [st, setSt] = useState(null);
  const [doc, setDoc] = useState(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  useEffect(() => {
    // Read again every 5 s while shown (embedding progress, sources, the broker).
    const read = () => api('/status').then((r) => (setSt(r), setError('')), (e) => setError(e.message));
    read();
    const timer = setInterval(() => document.visibilityState === 'visible' && read(), 5000);
    return () => clearInterval(timer);
  }, []);
  async function check() {
    setBusy(true);
    try {
      setDoc(await api('/doctor'));
    } catch (e) {
      setError(e.message);
    } finally {
      setBusy(false);
    }
  }
  if (error) return html`<p class="error">${error}</p>`;
  if (!st) return html`<p class="loading">${t('loading')}</p>`;
  const b = st.broker ?? {};
  return html`<section class="health">
    <dl>
      <dt>HomeAgent</dt><dd>${t('uptime')} ${duration(st.uptime_s ?? 0)}</dd>
      <dt>${t('llm')}</dt><dd>${(st.llm?.sources ?? []).map((s) => html`<div>${s.name}: ${s.model} · ${s.base_url} · <b class=${s.state === 'ok' ? 'ok' : s.state === 'untried' ? '' : 'error'}>${s.state}</b>${s.last_error ? ` (${s.last_error})` : ''}</div>`)}</dd>
      ${st.embeddings ? html`<dt>${t('embedding')}</dt><dd class="embeddings">${embeddingText(st.embeddings)}${st.embeddings.state === 'off' ? null : html`<div><progress max=${st.embeddings.total || 1} value=${st.embeddings.done ?? 0}></progress> ${t('emb_docs', st.embeddings.done ?? 0, st.embeddings.total ?? 0)}</div>`}</dd>` : null}
      <dt>${t('broker')}</dt><dd>${b.url}${b.embedded ? ` (${t('embedded')})` : ''} · <b class=${b.connected ? 'ok' : 'error'}>${b.connected ? t('connected') : t('not_connected')}</b></dd>
      <dt>${t('devices')}</dt><dd>${st.devices}</dd>
      ${st.restart_pending?.length ? html`<dt>${t('restart_pending')}</dt><dd>${st.restart_pending.map((k) => html`<code>${typeof k === 'string' ? k : k.key}</code> `)}</dd>` : null}
    </dl>
    <p><button type="button" onClick=${check} disabled=${busy}>${busy ? t('checking') : t('run_checks')}</button></p>
    ${doc ? html`<ul class="checks">${doc.checks.map((c) => html`<li class=${c.ok ? 'pass' : 'fail'}><b>${c.ok ? 'ok' : 'FAIL'}</b> ${c.name}: ${c.detail}${!c.ok && c.fix ? html`<div class="fix">${t('fix')}: ${c.fix}</div>` : null}</li>`)}</ul>` : null}
    <${HealthPanels} api=${api} lang=${L === WORDS.zh ? 'zh' : 'en'} />
  </section>`;
}

// ---- Settings ------------------------------------------------------------------------------------------------------

function Settings() {
  const [rows, setRows] = useState(null);
  const [filter, setFilter] = useState('');
  const [error, setError] = useState('');
  useEffect(() => {
    api('/settings').then(setRows, (e) => setError(e.message));
  }, []);
  if (error) return html`<p class="error">${error}</p>`;
  if (!rows) return html`<p class="loading">${t('loading')}</p>`;
  const f = filter.trim().toLowerCase();
  const shown = rows.filter((r) => !f || r.key.toLowerCase().includes(f) || r.description.toLowerCase().includes(f));
  return html`<section class="settings">
    <input class="filter" type="search" placeholder=${t('filter')} value=${filter} onInput=${(e) => setFilter(e.currentTarget.value)} aria-label=${t('filter_label')} />
    <p class="hint">${t('settings_hint', shown.length, rows.length)}</p>
    ${shown.map((r) => html`<${SettingRow} key=${r.key} row=${r} onSaved=${(v) => setRows((rs) => rs.map((x) => (x.key === v.key ? v : x)))} />`)}
  </section>`;
}

function valueText(r) {
  if (r.type === 'json') return JSON.stringify(r.value);
  if (r.secret) return '';
  return String(r.value ?? '');
}

function SettingRow({ row, onSaved }) {
  const [draft, setDraft] = useState(valueText(row));
  const [msg, setMsg] = useState(null);
  const changed = draft !== valueText(row);
  async function save(ev) {
    ev.preventDefault();
    setMsg(null);
    let body;
    if (row.type === 'json') {
      try {
        body = { value: JSON.parse(draft) };
      } catch (e) {
        return setMsg({ error: `${t('not_json')}: ${e.message}` });
      }
    } else body = { raw: draft };
    try {
      const v = await api(`/settings/${encodeURIComponent(row.key)}`, { method: 'PUT', body });
      onSaved(v);
      setDraft(valueText(v));
      setMsg({ ok: v.note ? `${t('saved')} ${v.note}` : t('saved') });
    } catch (e) {
      setMsg({ error: e.message });
    }
  }
  let input;
  if (row.type === 'boolean') input = html`<select value=${draft} onChange=${(e) => setDraft(e.currentTarget.value)}><option value="true">true</option><option value="false">false</option></select>`;
  else if (row.enum) input = html`<select value=${draft} onChange=${(e) => setDraft(e.currentTarget.value)}>${row.enum.map((o) => html`<option value=${o}>${o}</option>`)}</select>`;
  else if (row.type === 'json') input = html`<textarea rows="2" value=${draft} onInput=${(e) => setDraft(e.currentTarget.value)} />`;
  else input = html`<input type=${row.secret ? 'password' : row.type === 'number' || row.type === 'integer' ? 'text' : 'text'} inputmode=${row.type === 'number' || row.type === 'integer' ? 'decimal' : undefined} placeholder=${row.secret ? (row.value ? t('secret_set') : t('secret_unset')) : ''} value=${draft} onInput=${(e) => setDraft(e.currentTarget.value)} />`;
  const range = row.min !== undefined || row.max !== undefined ? ` ${row.min ?? ''}…${row.max ?? ''}` : '';
  return html`<form class="setting" data-key=${row.key} onSubmit=${save}>
    <div class="key"><code>${row.key}</code> <small>${row.type}${range}${row.restart ? ` · ${t('restart')}` : ''}${row.source !== 'default' ? ` · ${row.source}` : ''}</small></div>
    <div class="desc">${row.description}</div>
    <div class="edit">${input}<button type="submit" disabled=${!changed}>${t('save')}</button></div>
    ${msg?.error ? html`<div class="error" role="alert">${msg.error}</div>` : msg?.ok ? html`<div class="ok">${msg.ok}</div>` : null}
  </form>`;
}

// ---- Access --------------------------------------------------------------------------------------------------------

function Access({ session }) {
  const [rows, setRows] = useState(null);
  const [error, setError] = useState('');
  const load = () => api('/sessions').then(setRows, (e) => setError(e.message));
  useEffect(() => void load(), []);
  async function revoke(id) {
    if (!confirm(id === session.id ? t('confirm_self') : t('confirm_revoke', id))) return;
    try {
      await api(`/sessions/${encodeURIComponent(id)}`, { method: 'DELETE' });
      if (id === session.id) return location.reload();
      load();
    } catch (e) {
      setError(e.message);
    }
  }
  return html`<section class="access">
    <p class="hint">${t('access_hint')}</p>
    ${error ? html`<p class="error">${error}</p>` : null}
    ${rows ? html`<table><thead><tr><th>${t('th_id')}</th><th>${t('th_kind')}</th><th>${t('th_person')}</th><th>${t('th_used')}</th><th></th></tr></thead><tbody>
      ${rows.map((r) => html`<tr><td><code>${r.id}</code>${r.current ? ` ${t('this_browser')}` : ''}</td><td>${r.kind}</td><td>${r.person ?? ''}</td><td>${r.last_seen_at ? new Date(r.last_seen_at).toLocaleString() : `${t('until')} ${new Date(r.expires_at).toLocaleTimeString()}`}</td><td><button onClick=${() => revoke(r.id)}>${r.current ? t('sign_out') : t('revoke')}</button></td></tr>`)}
    </tbody></table>`
    : html`<p class="loading">${t('loading')}</p>`}
  </section>`;
}

// The language first (health names the box's), then the page.
fetch(`${API}/health`)
  .then((r) => r.json())
  .catch(() => ({}))
  .then((h) => {
    const lang = pickLanguage(h.language);
    L = WORDS[lang];
    document.documentElement.lang = lang === 'zh' ? 'zh-CN' : 'en';
    render(html`<${App} />`, document.getElementById('app'));
  });
