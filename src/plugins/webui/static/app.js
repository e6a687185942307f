// The HomeAgent WebUI: Talk, Activity, Settings and Access pages over /api/v1 (openapi.json).
// preact + htm from /vendor (an import map names them); no build step.
import { h, render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';

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

const PAGES = [
  ['talk', 'Talk'],
  ['activity', 'Activity'],
  ['settings', 'Settings'],
  ['access', 'Access'],
];

function currentPage() {
  const p = location.hash.replace(/^#\/?/, '');
  return PAGES.some(([id]) => id === p) ? p : 'talk';
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
  if (session === undefined) return html`<p class="loading">Loading…</p>`;
  if (session === null) return html`<${SignedOut} />`;
  return html`
    <header>
      <strong class="brand">HomeAgent</strong>
      <nav>${PAGES.map(([id, label]) => html`<a href="#/${id}" class=${page === id ? 'active' : ''} aria-current=${page === id ? 'page' : undefined}>${label}</a>`)}</nav>
      ${session.person ? html`<span class="who" title="what you type is said by ${session.person}">${session.person}</span>` : null}
    </header>
    ${session.https === false ? html`<p class="banner">Plain HTTP: push-to-talk is unavailable (browsers give the microphone only to secure pages). Set plugin.webui.https to true for it.</p>` : null}
    <main>
      ${page === 'talk' ? html`<${Talk} />` : page === 'activity' ? html`<${Activity} />` : page === 'settings' ? html`<${Settings} />` : html`<${Access} session=${session} />`}
    </main>`;
}

function SignedOut() {
  return html`<main class="login">
    <h1>HomeAgent</h1>
    <p>You are not signed in. On the box, run <code>homeagent webui link</code> (or <code>homeagent webui link --person NAME</code>) and open the link it prints on this device.</p>
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

const STATUS_TEXT = { interrupted: 'stopped', cancelled: 'stopped before it began', cut_short: 'cut short', error: 'failed' };

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
      setError(`Stop failed: ${err.message}`);
    }
  }

  return html`<section class="talk">
    <div class="messages" ref=${list} aria-live="polite">
      ${messages.length === 0 ? html`<p class="hint">Type below to talk to the box. The reply appears as it is written; Stop cuts it (and the speaker).</p>` : null}
      ${messages.map((m) => (m.who === 'you' ? html`<div class="msg you">${m.text}</div>` : html`<${Reply} m=${m} />`))}
    </div>
    ${error ? html`<p class="error">${error}</p>` : null}
    <form class="composer" onSubmit=${send}>
      <input name="text" autocomplete="off" placeholder="Ask the box…" value=${text} onInput=${(e) => setText(e.currentTarget.value)} aria-label="Message" />
      <button type="submit" disabled=${busy || !text.trim()}>Send</button>
      <button type="button" class="stop" onClick=${stop} disabled=${!busy}>Stop</button>
    </form>
  </section>`;
}

function Reply({ m }) {
  // The model's text as it is written; when nothing was streamed (a local command, a short answer), what was delivered.
  const written = m.rounds.filter(Boolean).join('\n\n');
  const shown = written || m.output || m.reply || '';
  const note = STATUS_TEXT[m.status];
  return html`<div class="msg box ${m.status === 'writing' ? 'writing' : ''}" data-status=${m.status}>
    <div class="text">${shown}${m.status === 'writing' ? html`<span class="cursor">▍</span>` : null}</div>
    ${m.tools.map((t) => html`<div class="tool ${t.is_error ? 'err' : ''}">tool <code>${t.name}(${JSON.stringify(t.arguments)})</code> → ${String(t.result).slice(0, 300)}</div>`)}
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
      t.interrupted = p.cancelled ? 'cancelled before it ran' : 'stopped';
      break;
    case 'error':
      t.error = `${p.where}: ${p.message}`;
      break;
    case 'turn.finished':
      t.outcome = p.outcome;
      t.status = p.status;
      t.said = p.said;
      break;
  }
  const next = i >= 0 ? turns.map((x, j) => (j === i ? t : x)) : [t, ...turns];
  return { turns: next.slice(0, MAX_TURNS) };
}

function Activity() {
  const [turns, setTurns] = useState([]);
  const [other, setOther] = useState([]);
  const [connected, setConnected] = useState(false);
  useEffect(() => {
    const es = new EventSource(`${API}/events?deltas=1`);
    es.onopen = () => setConnected(true);
    es.onerror = () => setConnected(false);
    es.onmessage = (m) => {
      const ev = JSON.parse(m.data);
      setTurns((ts) => {
        const r = fold(ts, ev);
        if (r.other && r.other.type !== 'assistant_state') setOther((o) => [r.other, ...o].slice(0, 30));
        return r.turns;
      });
    };
    return () => es.close();
  }, []);
  return html`<section class="activity">
    <p class="hint">${connected ? 'Live: every turn as it happens.' : 'Connecting…'}</p>
    ${turns.length === 0 ? html`<p class="hint">No turns yet. Talk to the box, or type on the Talk page.</p>` : null}
    ${turns.map((t) => html`<${Turn} t=${t} key=${t.id} />`)}
    ${other.length ? html`<h3>Other events</h3><ul class="events">${other.map((e) => html`<li><time>${new Date(e.at).toLocaleTimeString()}</time> <b>${e.type}</b> <code>${JSON.stringify(e.payload)}</code></li>`)}</ul>` : null}
  </section>`;
}

/** A duration for people: whole ms, or seconds with one decimal. */
function ms(v) {
  if (typeof v !== 'number') return '';
  return v < 1000 ? `${Math.round(v)} ms` : `${(v / 1000).toFixed(1)} s`;
}

function Turn({ t }) {
  const rounds = Object.entries(t.rounds).sort((a, b) => Number(a[0]) - Number(b[0]));
  const tools = Object.values(t.tools);
  const state = t.status ?? (t.interrupted ? 'stopped' : 'running');
  return html`<article class="turn" data-status=${state}>
    <header>
      <time>${new Date(t.at).toLocaleTimeString()}</time>
      <span class="badge ${state}">${state}</span>
      ${t.input ? html`<span class="src">${t.input.source} → ${t.input.channel}${t.input.user ? ` · ${t.input.user}` : ''}</span>` : null}
    </header>
    ${t.input ? html`<p class="input">“${t.input.text}”</p>` : null}
    ${rounds.map(([n, r]) => html`<div class="round">
      <div class="round-h">LLM round ${n}${r.model ? ` · ${r.model}` : ''}${r.duration_ms !== undefined ? ` · ${ms(r.duration_ms)}` : r.live ? ' · writing…' : ''}</div>
      ${r.text ? html`<div class="text">${r.text}</div>` : null}
      ${(r.calls ?? []).map((c) => html`<div class="call">calls <code>${c.function?.name ?? c.name}(${JSON.stringify(c.function?.arguments ?? c.arguments)})</code></div>`)}
    </div>`)}
    ${tools.map((c) => html`<div class="tool ${c.is_error ? 'err' : ''}">tool <code>${c.name}(${JSON.stringify(c.arguments)})</code>${c.done ? html` → ${c.denied ? '(denied) ' : ''}<span class="result">${String(c.result).slice(0, 500)}</span> <small>${ms(c.duration_ms)}</small>` : ' …'}</div>`)}
    ${t.outputs.map((o) => html`<div class="out">→ ${o.channel}: ${o.content}${o.interrupted ? ' (cut)' : ''}</div>`)}
    ${rounds.length === 0 && t.said ? html`<div class="round"><div class="round-h">the model wrote</div><div class="text">${t.said}</div></div>` : null}
    ${t.interrupted ? html`<div class="interrupt">■ ${t.interrupted}</div>` : null}
    ${t.error ? html`<div class="error">${t.error}</div>` : null}
    ${t.outcome ? html`<div class="outcome">outcome: <b>${t.outcome.kind}</b>${t.outcome.reason ? ` (${t.outcome.reason})` : ''}</div>` : null}
  </article>`;
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
  if (!rows) return html`<p class="loading">Loading…</p>`;
  const f = filter.trim().toLowerCase();
  const shown = rows.filter((r) => !f || r.key.toLowerCase().includes(f) || r.description.toLowerCase().includes(f));
  return html`<section class="settings">
    <input class="filter" type="search" placeholder="Filter settings…" value=${filter} onInput=${(e) => setFilter(e.currentTarget.value)} aria-label="Filter settings" />
    <p class="hint">${shown.length} of ${rows.length} settings. Values are checked as <code>homeagent config set</code> checks them; those marked “restart” apply after a restart.</p>
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
        return setMsg({ error: `not valid JSON: ${e.message}` });
      }
    } else body = { raw: draft };
    try {
      const v = await api(`/settings/${encodeURIComponent(row.key)}`, { method: 'PUT', body });
      onSaved(v);
      setDraft(valueText(v));
      setMsg({ ok: v.note ? `Saved. ${v.note}` : 'Saved.' });
    } catch (e) {
      setMsg({ error: e.message });
    }
  }
  let input;
  if (row.type === 'boolean') input = html`<select value=${draft} onChange=${(e) => setDraft(e.currentTarget.value)}><option value="true">true</option><option value="false">false</option></select>`;
  else if (row.enum) input = html`<select value=${draft} onChange=${(e) => setDraft(e.currentTarget.value)}>${row.enum.map((o) => html`<option value=${o}>${o}</option>`)}</select>`;
  else if (row.type === 'json') input = html`<textarea rows="2" value=${draft} onInput=${(e) => setDraft(e.currentTarget.value)} />`;
  else input = html`<input type=${row.secret ? 'password' : row.type === 'number' || row.type === 'integer' ? 'text' : 'text'} inputmode=${row.type === 'number' || row.type === 'integer' ? 'decimal' : undefined} placeholder=${row.secret ? (row.value ? '(set; type to replace)' : '(not set)') : ''} value=${draft} onInput=${(e) => setDraft(e.currentTarget.value)} />`;
  const range = row.min !== undefined || row.max !== undefined ? ` ${row.min ?? ''}…${row.max ?? ''}` : '';
  return html`<form class="setting" data-key=${row.key} onSubmit=${save}>
    <div class="key"><code>${row.key}</code> <small>${row.type}${range}${row.restart ? ' · restart' : ''}${row.source !== 'default' ? ` · ${row.source}` : ''}</small></div>
    <div class="desc">${row.description}</div>
    <div class="edit">${input}<button type="submit" disabled=${!changed}>Save</button></div>
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
    if (!confirm(id === session.id ? 'Sign this browser out?' : `Revoke ${id}? It opens nothing from now on.`)) return;
    try {
      await api(`/sessions/${encodeURIComponent(id)}`, { method: 'DELETE' });
      if (id === session.id) return location.reload();
      load();
    } catch (e) {
      setError(e.message);
    }
  }
  return html`<section class="access">
    <p class="hint">Browsers and scripts that can use this box, and links not opened yet. Make a link on the box with <code>homeagent webui link [--person NAME]</code>.</p>
    ${error ? html`<p class="error">${error}</p>` : null}
    ${rows ? html`<table><thead><tr><th>id</th><th>kind</th><th>person</th><th>last used</th><th></th></tr></thead><tbody>
      ${rows.map((r) => html`<tr><td><code>${r.id}</code>${r.current ? ' (this browser)' : ''}</td><td>${r.kind}</td><td>${r.person ?? ''}</td><td>${r.last_seen_at ? new Date(r.last_seen_at).toLocaleString() : `until ${new Date(r.expires_at).toLocaleTimeString()}`}</td><td><button onClick=${() => revoke(r.id)}>${r.current ? 'Sign out' : 'Revoke'}</button></td></tr>`)}
    </tbody></table>` : html`<p class="loading">Loading…</p>`}
  </section>`;
}

render(html`<${App} />`, document.getElementById('app'));
