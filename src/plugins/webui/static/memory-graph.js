// The Memory page's graph (issue 16 page 3): people, entities and relations as a small SVG force layout, loaded
// by app.js only when the Memory page opens. Tap an entity: its facts and neighbours, rename it, change a fact,
// or forget it, each behind a confirmation dialog; the changes go through POST /memory/edit and /memory/forget
// (the model's own memory tools). No library: a few dozen nodes laid out in a few milliseconds.
import { h } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import htm from 'htm';

const html = htm.bind(h);
/** The drawing's size (SVG user units; the SVG scales to the page's width). */
const W = 480;
const H = 400;
const MARGIN = 36;

/**
 * Positions for `nodes` (each {id}) joined by `edges` ({source, target}) in a W×H box, by Fruchterman–Reingold
 * (repulsion between every pair, springs along edges, a pull to the centre, cooling). Deterministic. `prev`
 * (Map id → {x, y}) keeps nodes already drawn near where they were, and a new node starts beside a drawn
 * neighbour, so exploring does not reshuffle the picture. Returns a Map id → {x, y}.
 */
export function layout(nodes, edges, prev = new Map()) {
  const n = nodes.length;
  const pos = new Map();
  const links = edges.filter((e) => e.source !== e.target);
  nodes.forEach((nd, i) => {
    const old = prev.get(nd.id);
    if (old) return pos.set(nd.id, { ...old });
    const near = links.map((e) => (e.source === nd.id ? e.target : e.target === nd.id ? e.source : undefined)).find((o) => o !== undefined && prev.has(o));
    const a = (2 * Math.PI * i) / Math.max(n, 1) + 0.3;
    if (near !== undefined) {
      const p = prev.get(near);
      pos.set(nd.id, { x: p.x + Math.cos(a) * 40, y: p.y + Math.sin(a) * 40 });
    } else pos.set(nd.id, { x: W / 2 + Math.cos(a) * W * 0.32, y: H / 2 + Math.sin(a) * H * 0.32 });
  });
  const k = Math.min(110, Math.sqrt(((W - 2 * MARGIN) * (H - 2 * MARGIN)) / Math.max(n, 1)) * 0.75);
  let temp = prev.size ? W / 20 : W / 8;
  const ids = nodes.map((nd) => nd.id);
  for (let it = 0; it < 220; it++) {
    const disp = new Map(ids.map((id) => [id, { x: 0, y: 0 }]));
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        const a = pos.get(ids[i]), b = pos.get(ids[j]);
        let dx = a.x - b.x, dy = a.y - b.y;
        if (dx === 0 && dy === 0) (dx = 0.1 * (i + 1)), (dy = 0.1 * (j + 1));
        const d = Math.max(0.01, Math.hypot(dx, dy));
        const f = (k * k) / d;
        const da = disp.get(ids[i]), db = disp.get(ids[j]);
        da.x += (dx / d) * f, da.y += (dy / d) * f;
        db.x -= (dx / d) * f, db.y -= (dy / d) * f;
      }
    }
    for (const e of links) {
      const a = pos.get(e.source), b = pos.get(e.target);
      if (!a || !b) continue;
      const dx = a.x - b.x, dy = a.y - b.y;
      const d = Math.max(0.01, Math.hypot(dx, dy));
      const f = (d * d) / k;
      const da = disp.get(e.source), db = disp.get(e.target);
      da.x -= (dx / d) * f, da.y -= (dy / d) * f;
      db.x += (dx / d) * f, db.y += (dy / d) * f;
    }
    for (const id of ids) {
      const p = pos.get(id), v = disp.get(id);
      v.x += (W / 2 - p.x) * 0.08 * k * 0.1;
      v.y += (H / 2 - p.y) * 0.08 * k * 0.1;
      const len = Math.max(0.01, Math.hypot(v.x, v.y));
      const step = Math.min(len, temp);
      p.x = Math.min(W - MARGIN, Math.max(MARGIN, p.x + (v.x / len) * step));
      p.y = Math.min(H - MARGIN, Math.max(MARGIN, p.y + (v.y / len) * step));
    }
    temp = Math.max(0.5, temp * 0.96);
  }
  return pos;
}

const TYPE_CLASS = { person: 't-person', place: 't-place', thing: 't-thing' };

/** Merge a graph answer (GET /memory/graph) into `g` ({entities: Map, relations: Map}); a new object. */
function merge(g, part) {
  const entities = new Map(g.entities);
  const relations = new Map(g.relations);
  for (const e of part.entities) entities.set(e.id, e);
  for (const r of part.relations) relations.set(r.id, r);
  return { entities, relations, total: part.total ?? g.total };
}

const EMPTY = { entities: new Map(), relations: new Map(), total: 0 };

/**
 * The graph with its details and dialogs. `api` is app.js's API call, `t` its words; `onChanged` is called
 * after an edit or a forgetting (the page refreshes what it shows beside the graph).
 */
export function MemoryGraph({ api, t, onChanged }) {
  const [g, setG] = useState(EMPTY);
  const [loaded, setLoaded] = useState(false);
  const [selected, setSelected] = useState(null); // the explored entity's answer: {entities, relations, focus}
  const [find, setFind] = useState('');
  const [note, setNote] = useState(null); // {error} | {ok}
  const [dialog, setDialog] = useState(null); // {kind: 'rename'|'relation'|'forget', ...}
  const positions = useRef(new Map());

  async function reload(keep) {
    try {
      const all = await api('/memory/graph');
      let next = merge(EMPTY, all);
      if (keep) {
        try {
          const part = await api(`/memory/graph?entity=${encodeURIComponent(keep)}`);
          next = merge(next, part);
          setSelected(part);
        } catch {
          setSelected(null);
        }
      } else setSelected(null);
      setG(next);
    } catch (e) {
      setNote({ error: e.message });
    } finally {
      setLoaded(true);
    }
  }
  useEffect(() => void reload(), []);

  /** Explore entity `name`: its relations and neighbours join the drawing; it is selected. */
  async function explore(name) {
    setNote(null);
    try {
      const part = await api(`/memory/graph?entity=${encodeURIComponent(name)}`);
      setG((cur) => merge(cur, part));
      setSelected(part);
    } catch (e) {
      setNote({ error: e.status === 404 ? t('not_in_graph', name) : e.message });
    }
  }

  async function confirmDialog(ev) {
    ev.preventDefault();
    const d = dialog;
    const form = new FormData(ev.currentTarget);
    try {
      let r;
      let keep = selectedEntity?.name;
      if (d.kind === 'rename') {
        const name = String(form.get('new_name') ?? '').trim();
        r = await api('/memory/edit', { method: 'POST', body: { entity: d.entity.name, new_name: name } });
        keep = name;
      } else if (d.kind === 'relation') {
        const body = { relation_id: d.relation.id };
        const rel = String(form.get('relation_type') ?? '').trim();
        const target = String(form.get('target') ?? '').trim();
        if (rel && rel !== d.relation.relation) body.relation_type = rel;
        if (target && target !== d.targetName) body.target = target;
        if (body.relation_type === undefined && body.target === undefined) return setDialog(null);
        r = await api('/memory/edit', { method: 'POST', body });
      } else {
        r = await api('/memory/forget', { method: 'POST', body: { entity: d.entity.name } });
        keep = undefined;
      }
      setDialog(null);
      setNote({ ok: r.result });
      await reload(keep);
      onChanged?.();
    } catch (e) {
      setDialog({ ...d, error: e.message });
    }
  }

  const nodes = [...g.entities.values()];
  const edges = [...g.relations.values()].filter((r) => g.entities.has(r.source) && g.entities.has(r.target));
  // Laid out again only when the graph changes (not on every keystroke), from where the nodes were.
  const pos = useMemo(() => (positions.current = layout(nodes, edges, positions.current)), [g]);
  const selectedEntity = selected ? g.entities.get(selected.focus) : null;
  const name = (id) => g.entities.get(id)?.name ?? `#${id}`;
  const near = selectedEntity ? new Set(edges.filter((e) => e.source === selectedEntity.id || e.target === selectedEntity.id).flatMap((e) => [e.source, e.target])) : new Set();
  const selRelations = selected ? selected.relations : [];
  const neighbours = selectedEntity ? [...near].filter((id) => id !== selectedEntity.id).map((id) => g.entities.get(id)).filter(Boolean) : [];

  return html`<div class="graph-panel">
    <form class="composer find" onSubmit=${(e) => (e.preventDefault(), find.trim() && explore(find.trim()))}>
      <input type="search" value=${find} onInput=${(e) => setFind(e.currentTarget.value)} aria-label=${t('find_label')} placeholder=${t('find_label')} />
      <button type="submit" disabled=${!find.trim()}>${t('find')}</button>
    </form>
    ${note?.error ? html`<p class="error" role="alert">${note.error}</p>` : note?.ok ? html`<p class="ok done" role="status">${note.ok}</p>` : null}
    ${!loaded ? html`<p class="loading">${t('loading')}</p>` : nodes.length === 0 ? html`<p class="hint">${t('graph_empty')}</p>` : html`
      <svg class="graph" viewBox="0 0 ${W} ${H}" role="img" aria-label=${t('mem_graph')}>
        ${edges.map((e) => {
          const a = pos.get(e.source), b = pos.get(e.target);
          const hot = selectedEntity && (e.source === selectedEntity.id || e.target === selectedEntity.id);
          return html`<g class="edge ${hot ? 'hot' : ''}" data-id=${e.id}>
            <line x1=${a.x} y1=${a.y} x2=${b.x} y2=${b.y} />
            ${hot ? html`<text x=${(a.x + b.x) / 2} y=${(a.y + b.y) / 2 - 3}>${e.relation}</text>` : null}
          </g>`;
        })}
        ${nodes.map((nd) => {
          const p = pos.get(nd.id);
          const r = Math.min(16, 6 + Math.sqrt(nd.mentions || 1) * 2);
          const label = nd.name.length > 18 ? nd.name.slice(0, 17) + '…' : nd.name;
          // The whole of the node, its name included, takes the tap (not only the dot).
          const hitW = Math.max(2 * r + 8, label.length * 7.5);
          const cls = `node ${TYPE_CLASS[nd.type] ?? 't-other'} ${selectedEntity?.id === nd.id ? 'selected' : near.has(nd.id) ? 'near' : ''}`;
          return html`<g class=${cls} data-name=${nd.name} role="button" tabindex="0" aria-label=${nd.name} onClick=${() => explore(nd.name)} onKeyDown=${(e) => (e.key === 'Enter' || e.key === ' ') && (e.preventDefault(), explore(nd.name))}>
            <rect class="hit" x=${p.x - hitW / 2} y=${p.y - r - 2} width=${hitW} height=${2 * r + 20} />
            <circle cx=${p.x} cy=${p.y} r=${r} />
            <text x=${p.x} y=${p.y + r + 14}>${label}</text>
          </g>`;
        })}
      </svg>
      <p class="legend">${['person', 'place', 'thing', 'other'].map((k) => html`<span class="t-${k}"><i></i>${t(`type_${k}`)}</span>`)}</p>
      <p class="hint">${t('graph_hint')}${g.total > nodes.length ? ` ${t('graph_more', nodes.length, g.total)}` : ''}</p>`}
    ${selectedEntity ? html`<div class="entity" data-name=${selectedEntity.name}>
      <h3>${selectedEntity.name} <small>${TYPE_CLASS[selectedEntity.type] ? t(`type_${selectedEntity.type}`) : selectedEntity.type} · ${t('mentions', selectedEntity.mentions)}</small></h3>
      <p class="actions">
        <button type="button" onClick=${() => setDialog({ kind: 'rename', entity: selectedEntity })}>${t('rename')}</button>
        <button type="button" class="danger" onClick=${() => setDialog({ kind: 'forget', entity: selectedEntity })}>${t('forget')}</button>
      </p>
      <h4>${t('facts')}</h4>
      ${selRelations.length === 0 ? html`<p class="hint">${t('no_relations')}</p>` : html`<ul class="facts">${selRelations.map((r) => html`<li class="fact" data-id=${r.id}>
        <span><b>${name(r.source)}</b> ${r.relation} <b>${name(r.target)}</b></span>
        <button type="button" class="link" onClick=${() => setDialog({ kind: 'relation', relation: r, targetName: name(r.target), fact: `${name(r.source)} ${r.relation} ${name(r.target)}` })}>${t('edit')}</button>
      </li>`)}</ul>`}
      ${neighbours.length ? html`<h4>${t('neighbours')}</h4><p class="neighbours">${neighbours.map((e) => html`<button type="button" class="chip" onClick=${() => explore(e.name)}>${e.name}</button>`)}</p>` : null}
    </div>` : null}
    ${dialog ? html`<${Dialog} onClose=${() => setDialog(null)}>
      <form class="confirm" onSubmit=${confirmDialog}>
        <p>${dialog.kind === 'rename' ? t('confirm_rename', dialog.entity.name) : dialog.kind === 'relation' ? t('confirm_edit_rel', dialog.fact) : t('confirm_forget', dialog.entity.name)}</p>
        ${dialog.kind === 'rename' ? html`<label>${t('new_name')} <input name="new_name" required maxlength="200" value=${dialog.entity.name} aria-label=${t('new_name')} /></label>` : null}
        ${dialog.kind === 'relation' ? html`<label>${t('relation')} <input name="relation_type" maxlength="200" value=${dialog.relation.relation} aria-label=${t('relation')} /></label>
          <label>${t('target')} <input name="target" maxlength="200" value=${dialog.targetName} aria-label=${t('target')} /></label>` : null}
        ${dialog.error ? html`<p class="error" role="alert">${dialog.error}</p>` : null}
        <div class="buttons">
          <button type="button" onClick=${() => setDialog(null)}>${t('cancel')}</button>
          <button type="submit" class=${dialog.kind === 'forget' ? 'danger' : ''}>${dialog.kind === 'forget' ? t('forget') : t('save')}</button>
        </div>
      </form>
    <//>` : null}
  </div>`;
}

/** A modal <dialog> (Escape or Cancel closes it); memory-lists.js uses it too. */
export function Dialog({ onClose, children }) {
  const ref = useRef(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => d?.open && d.close();
  }, []);
  return html`<dialog ref=${ref} class="confirm-dialog" onCancel=${(e) => (e.preventDefault(), onClose())}>${children}</dialog>`;
}
