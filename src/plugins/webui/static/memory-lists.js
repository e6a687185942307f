// The Memory page's lists (issue 16 page 3), loaded by app.js with the graph: the memory's documents (earlier
// conversations and notes, newest first, a page at a time: GET /memory/documents; another person's sensitive ones are
// not sent), each forgotten behind a confirmation through POST /memory/forget {"document": id} (the model's
// memory_forget, by the document's words); and the knowledge base (GET /knowledge), a document opened in place.
import { h } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import htm from 'htm';
import { Dialog } from './memory-graph.js';

const html = htm.bind(h);
/** Documents per page. */
const PAGE = 10;

/** Who a document is from, in the page's words. */
function who(d, t) {
  if (d.speaker) return d.speaker;
  if (d.kind === 'note') return t('doc_note');
  if (d.kind === 'agent') return t('doc_box');
  return t('doc_someone');
}

/** A document's words in one line: title, what was said, the answer. */
function docText(d) {
  return [d.title, d.input, d.response].filter(Boolean).join(' — ');
}

/**
 * The memory's documents. `api` is app.js's API call, `t` its words; `onChanged` is called after a forgetting (the
 * page refreshes the graph, the numbers and the search beside the list).
 */
export function MemoryDocuments({ api, t, onChanged }) {
  const [docs, setDocs] = useState(null);
  const [next, setNext] = useState(undefined);
  const [note, setNote] = useState(null); // {error} | {ok}
  const [dialog, setDialog] = useState(null); // {doc, error?}

  async function load(before) {
    try {
      const p = await api(`/memory/documents?limit=${PAGE}${before ? `&before=${encodeURIComponent(before)}` : ''}`);
      setDocs((cur) => (before && cur ? [...cur, ...p.documents] : p.documents));
      setNext(p.next);
    } catch (e) {
      setNote({ error: e.message });
      setDocs((cur) => cur ?? []);
    }
  }
  useEffect(() => void load(), []);

  async function forget(ev) {
    ev.preventDefault();
    const d = dialog.doc;
    try {
      const r = await api('/memory/forget', { method: 'POST', body: { document: d.id } });
      setDialog(null);
      setNote({ ok: r.result });
      await load();
      onChanged?.();
    } catch (e) {
      setDialog({ doc: d, error: e.message });
    }
  }

  return html`<div class="documents">
    <p class="hint">${t('docs_hint')}</p>
    ${note?.error ? html`<p class="error" role="alert">${note.error}</p>` : note?.ok ? html`<p class="ok done" role="status">${note.ok}</p>` : null}
    ${docs === null ? html`<p class="loading">${t('loading')}</p>` : docs.length === 0 ? html`<p class="hint">${t('docs_empty')}</p>` : html`<ul class="doc-list">
      ${docs.map((d) => html`<li class="doc" data-id=${d.id} data-kind=${d.kind}>
        <div class="doc-head"><b>${who(d, t)}</b> <time class="sub">${new Date(d.time).toLocaleString()}</time>
          <button type="button" class="link" onClick=${() => setDialog({ doc: d })}>${t('forget')}</button></div>
        <div class="doc-text">${d.title ? html`<b>${d.title}</b> ` : null}${d.input}${d.input && d.response ? ' → ' : ''}${d.response}</div>
      </li>`)}
    </ul>`}
    ${next ? html`<p><button type="button" onClick=${() => load(next)}>${t('docs_more')}</button></p>` : null}
    ${dialog ? html`<${Dialog} onClose=${() => setDialog(null)}>
      <form class="confirm" onSubmit=${forget}>
        <p>${t('confirm_forget_doc', docText(dialog.doc).slice(0, 160))}</p>
        ${dialog.error ? html`<p class="error" role="alert">${dialog.error}</p>` : null}
        <div class="buttons">
          <button type="button" onClick=${() => setDialog(null)}>${t('cancel')}</button>
          <button type="submit" class="danger">${t('forget')}</button>
        </div>
      </form>
    <//>` : null}
  </div>`;
}

/** The knowledge base: its documents with where each comes from; one opened shows its text. */
export function MemoryKnowledge({ api, t }) {
  const [list, setList] = useState(null);
  const [open, setOpen] = useState(null); // {name, content}
  const [error, setError] = useState('');
  useEffect(() => {
    api('/knowledge').then(setList, (e) => (setError(e.message), setList([])));
  }, []);
  async function toggle(name) {
    if (open?.name === name) return setOpen(null);
    try {
      setOpen(await api(`/knowledge/${encodeURIComponent(name)}`));
      setError('');
    } catch (e) {
      setError(e.message);
    }
  }
  return html`<div class="knowledge">
    <p class="hint">${t('knowledge_hint')}</p>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    ${list === null ? html`<p class="loading">${t('loading')}</p>` : list.length === 0 ? html`<p class="hint">${t('knowledge_empty')}</p>` : html`<ul class="kn-list">
      ${list.map((k) => html`<li class="kn" data-name=${k.name}>
        <button type="button" class="link" aria-expanded=${open?.name === k.name} onClick=${() => toggle(k.name)}>${k.name}</button>
        <span class="sub">${k.source === 'user' ? t('kn_user') : t('kn_shipped')} · ${t('kn_size', k.bytes)}</span>
        ${open?.name === k.name ? html`<pre class="kn-text">${open.content}</pre>` : null}
      </li>`)}
    </ul>`}
  </div>`;
}
