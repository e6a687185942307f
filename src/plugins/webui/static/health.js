// The Health page's panels (issue 16, page 6): timers and lists, plugins with their state and a restart button, the log tail,
// and updates (upload a release bundle with a progress bar, install, roll back) through the update spool that the
// root helper (systemd/homeagent-update.path) carries out. Routes: health-api.ts. Used by app.js's Health page.
import { h } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import htm from 'htm';

const html = htm.bind(h);

const WORDS = {
  en: {
    plugins: 'Plugins', th_name: 'name', th_kind: 'kind', th_state: 'state', th_restarts: 'restarts', th_error: 'last error',
    restart: 'Restart', restarting: 'Restarting…', confirm_restart: (n) => `Restart the plugin ${n}? It stops and starts between turns.`,
    log: 'Last warnings and errors', no_problems: 'None since the service started.',
    updates: 'Updates', update_hint: (mb) => `Upload a release bundle (homeagent-<version>.tar.gz, at most ${mb} MB). The box checks its signature before anything changes and rolls back by itself if the new release does not start.`,
    choose: 'Release bundle', upload: 'Upload', uploading: (p) => `Uploading… ${p}%`, too_big: (mb) => `This file is over the limit of ${mb} MB (plugin.webui.update_max_mb).`,
    waiting_bundle: 'Ready to install', install: 'Install', discard: 'Discard', rollback: 'Roll back to the previous release',
    confirm_install: 'Install this release? The service restarts; this page reconnects when it is back.', confirm_rollback: 'Switch back to the previous release? The service restarts.',
    queued: 'Waiting for the update helper…', not_picked: 'The update helper has not picked the request up. On the box: sudo systemctl enable --now homeagent-update.path',
    running: 'Working', installed: 'Installed', refused: 'Refused', failed: 'Failed', rolled_back: 'Rolled back', last_update: 'Last update', why: 'signature check',
    lost: 'The service is not answering (restarting?); trying again…',
    timers_lists: 'Timers and lists', no_timers: 'No timers running.', paused: 'paused', left: (d) => `${d} left`,
    shopping: 'Shopping list', todo: 'To-do list', empty: '(empty)',
  },
  zh: {
    plugins: '插件', th_name: '名称', th_kind: '类型', th_state: '状态', th_restarts: '重启次数', th_error: '最近的错误',
    restart: '重启', restarting: '重启中…', confirm_restart: (n) => `重启插件 ${n}？它会在两轮对话之间停止并重新启动。`,
    log: '最近的警告和错误', no_problems: '服务启动以来没有。',
    updates: '更新', update_hint: (mb) => `上传发布包（homeagent-<版本>.tar.gz，最大 ${mb} MB）。设备会在做任何改动之前检查它的签名；新版本无法启动时会自动回滚。`,
    choose: '发布包', upload: '上传', uploading: (p) => `上传中… ${p}%`, too_big: (mb) => `文件超过 ${mb} MB 的上限（plugin.webui.update_max_mb）。`,
    waiting_bundle: '可以安装', install: '安装', discard: '丢弃', rollback: '回滚到上一个版本',
    confirm_install: '安装这个版本？服务会重启；重启后本页面会重新连接。', confirm_rollback: '切换回上一个版本？服务会重启。',
    queued: '等待更新助手…', not_picked: '更新助手还没有接收请求。在设备上运行：sudo systemctl enable --now homeagent-update.path',
    running: '进行中', installed: '已安装', refused: '被拒绝', failed: '失败', rolled_back: '已回滚', last_update: '最近一次更新', why: '签名检查',
    lost: '服务没有响应（正在重启？）；正在重试…',
    timers_lists: '计时器和清单', no_timers: '没有正在运行的计时器。', paused: '已暂停', left: (d) => `还剩 ${d}`,
    shopping: '购物清单', todo: '待办清单', empty: '（空）',
  },
};

/** Poll `fn` every `ms` while the component is shown. */
function usePoll(fn, ms, deps = []) {
  useEffect(() => {
    let stop = false;
    let timer;
    const tick = async () => {
      await fn();
      if (!stop) timer = setTimeout(tick, ms);
    };
    tick();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, deps);
}

function mb(bytes) {
  return Math.round((bytes / 1048576) * 10) / 10;
}

/** The panels below the Health page's status: `api` is app.js's API call, `lang` en or zh. */
export function HealthPanels({ api, lang }) {
  const W = WORDS[lang] ?? WORDS.en;
  const t = (k, ...a) => (typeof W[k] === 'function' ? W[k](...a) : W[k] ?? WORDS.en[k] ?? k);
  return html`<${TimersLists} api=${api} t=${t} /><${Plugins} api=${api} t=${t} /><${LogTail} api=${api} t=${t} /><${Updates} api=${api} t=${t} />`;
}

/** A duration in seconds as h:mm:ss or m:ss. */
function clock(s) {
  const n = Math.max(0, Math.round(s));
  const h = Math.floor(n / 3600);
  const m = Math.floor((n % 3600) / 60);
  const ss = String(n % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** Timers (what is left, counting down between polls) and the shopping and to-do lists (GET /timers, /lists). */
function TimersLists({ api, t }) {
  const [timers, setTimers] = useState(null);
  const [lists, setLists] = useState(null);
  const [at, setAt] = useState(Date.now());
  usePoll(async () => {
    const [tm, ls] = await Promise.all([api('/timers').catch(() => null), api('/lists').catch(() => null)]);
    setTimers(tm);
    setLists(ls);
    setAt(Date.now());
  }, 5000);
  // The seconds tick between polls.
  const [, tick] = useState(0);
  useEffect(() => {
    const id = setInterval(() => tick((n) => n + 1), 1000);
    return () => clearInterval(id);
  }, []);
  const gone = (Date.now() - at) / 1000;
  return html`<section class="timers-lists"><h3>${t('timers_lists')}</h3>
    ${timers === null ? null : timers.length === 0 ? html`<p class="hint">${t('no_timers')}</p>` : html`<ul class="timers">${timers.map((x) => html`<li><b>${x.name ?? clock(x.duration_s)}</b> ${x.state === 'paused' ? t('paused') : t('left', clock(x.remaining_s - gone))}</li>`)}</ul>`}
    ${lists === null ? null : Object.entries(lists).map(([name, items]) => html`<div class="list"><h4>${t(name)}</h4>${items.length === 0 ? html`<p class="hint">${t('empty')}</p>` : html`<ul>${items.map((i) => html`<li>${i.text}</li>`)}</ul>`}</div>`)}
  </section>`;
}

function Plugins({ api, t }) {
  const [rows, setRows] = useState(null);
  const [busy, setBusy] = useState('');
  const [error, setError] = useState('');
  const load = () => api('/plugins').then(setRows, (e) => setError(e.message));
  usePoll(load, 10000);
  async function restart(name) {
    if (!confirm(t('confirm_restart', name))) return;
    setBusy(name);
    setError('');
    try {
      await api(`/plugins/${encodeURIComponent(name)}/restart`, { method: 'POST' });
      await load();
    } catch (e) {
      setError(`${name}: ${e.message}`);
    } finally {
      setBusy('');
    }
  }
  return html`<section class="plugins-panel"><h3>${t('plugins')}</h3>
    ${error ? html`<p class="error">${error}</p>` : null}
    ${rows ? html`<table class="plugins"><thead><tr><th>${t('th_name')}</th><th>${t('th_kind')}</th><th>${t('th_state')}</th><th>${t('th_restarts')}</th><th>${t('th_error')}</th><th></th></tr></thead><tbody>
      ${rows.map((p) => html`<tr class=${p.state}><td>${p.name}${p.version ? html` <small>${p.version}</small>` : null}</td><td>${p.kind}</td><td><b class=${p.state === 'running' ? 'ok' : p.state === 'failed' ? 'error' : ''}>${p.state}</b></td><td>${p.restarts}</td><td>${p.error ?? p.last_error ?? p.message ?? ''}</td>
        <td>${p.name === 'webui' ? null : html`<button type="button" onClick=${() => restart(p.name)} disabled=${busy !== ''}>${busy === p.name ? t('restarting') : t('restart')}</button>`}</td></tr>`)}
    </tbody></table>` : null}
  </section>`;
}

function LogTail({ api, t }) {
  const [problems, setProblems] = useState(null);
  usePoll(() => api('/logs').then((r) => setProblems(r.problems), () => undefined), 5000);
  return html`<section class="log-tail"><h3>${t('log')}</h3>
    ${problems === null ? null : problems.length === 0 ? html`<p class="hint">${t('no_problems')}</p>` : html`<ul class="events">${[...problems].reverse().map((p) => html`<li><time>${new Date(p.time).toLocaleTimeString()}</time> <b class=${p.level === 'warn' ? '' : 'error'}>${p.level}</b> ${p.ns.replace(/^homeagent:/, '')}: ${p.msg}${p.err ? ` (${p.err})` : ''}</li>`)}</ul>`}
  </section>`;
}

/** PUT the file with XMLHttpRequest (fetch reports no upload progress); resolves with the JSON answer, rejects with the server's message. */
function put(file, onProgress) {
  return new Promise((resolve, reject) => {
    const x = new XMLHttpRequest();
    x.open('PUT', `/api/v1/update/bundle?name=${encodeURIComponent(file.name)}`);
    x.setRequestHeader('content-type', 'application/gzip');
    x.upload.onprogress = (e) => e.lengthComputable && onProgress(Math.floor((e.loaded / e.total) * 100));
    x.onload = () => {
      let data = null;
      try {
        data = JSON.parse(x.responseText);
      } catch {}
      if (x.status === 200) resolve(data);
      else reject(new Error(data?.error ?? `${x.status} ${x.statusText}`));
    };
    x.onerror = () => reject(new Error('the upload was cut off'));
    x.send(file);
  });
}

function Updates({ api, t }) {
  const [view, setView] = useState(null);
  const [lost, setLost] = useState(false);
  const [file, setFile] = useState(null);
  const [progress, setProgress] = useState(-1);
  const [error, setError] = useState('');
  const load = () =>
    api('/update').then(
      (v) => {
        setView(v);
        setLost(false);
      },
      (e) => (e.status ? setError(e.message) : setLost(true)),
    );
  usePoll(load, 2000);
  const maxMb = view ? mb(view.max_bytes) : 0;
  async function upload(ev) {
    ev.preventDefault();
    setError('');
    if (!file) return;
    if (file.size > view.max_bytes) return setError(t('too_big', maxMb));
    setProgress(0);
    try {
      await put(file, setProgress);
      await load();
    } catch (e) {
      setError(e.message);
    } finally {
      setProgress(-1);
    }
  }
  async function act(path, question) {
    if (question && !confirm(question)) return;
    setError('');
    try {
      await api(path, { method: path.endsWith('bundle') ? 'DELETE' : 'POST' });
      await load();
    } catch (e) {
      setError(e.message);
    }
  }
  if (!view) return html`<section class="updates"><h3>${t('updates')}</h3>${error ? html`<p class="error">${error}</p>` : null}</section>`;
  const st = view.status;
  const busy = !!view.request || st?.state === 'running';
  const waited = view.request ? Date.now() - view.request.requested_at : 0;
  const verdict = st && st.state !== 'running' ? (st.ok ? (st.outcome === 'rolled-back' ? 'rolled_back' : 'installed') : st.outcome === 'refused' ? 'refused' : st.outcome === 'rolled-back' ? 'rolled_back' : 'failed') : '';
  return html`<section class="updates"><h3>${t('updates')}</h3>
    <p class="hint">${t('update_hint', maxMb)}</p>
    ${lost ? html`<p class="hint">${t('lost')}</p>` : null}
    <form class="upload" onSubmit=${upload}>
      <label>${t('choose')} <input type="file" name="bundle" accept=".tar.gz,.tgz,application/gzip" onChange=${(e) => setFile(e.target.files[0] ?? null)} disabled=${busy || progress >= 0} /></label>
      <button type="submit" disabled=${!file || busy || progress >= 0}>${t('upload')}</button>
      ${progress >= 0 ? html`<progress max="100" value=${progress}></progress> <span>${t('uploading', progress)}</span>` : null}
    </form>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    ${view.bundle && !busy ? html`<p class="bundle">${t('waiting_bundle')}: <b>${view.bundle.name}</b> (${mb(view.bundle.size)} MB, SHA-256 <code>${view.bundle.sha256.slice(0, 16)}…</code>)
      <button type="button" onClick=${() => act('/update/install', t('confirm_install'))}>${t('install')}</button>
      <button type="button" onClick=${() => act('/update/bundle')}>${t('discard')}</button></p>` : null}
    ${view.request ? html`<p class="hint">${waited > 15000 ? t('not_picked') : t('queued')}</p>` : null}
    ${st ? html`<div class=${`update-status ${st.state}`}>
      <p><b>${st.state === 'running' ? t('running') : t('last_update')}</b> (${st.action}, ${new Date(st.updated_at).toLocaleString()}):
        ${verdict ? html` <b class=${st.ok ? 'ok' : 'error'}>${t(verdict)}</b>` : null} ${st.message ?? st.step}</p>
      ${st.signature_refusal ? html`<p class="error">${t('why')}: ${st.signature_refusal}</p>` : null}
      ${st.log?.length ? html`<details open=${st.state === 'running'}><summary>log</summary><pre>${st.log.join('\n')}</pre></details>` : null}
    </div>` : null}
    <p><button type="button" class="rollback" onClick=${() => act('/update/rollback', t('confirm_rollback'))} disabled=${busy}>${t('rollback')}</button></p>
  </section>`;
}
