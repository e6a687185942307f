// Opens a session with the one-time link's token (the part after '#', never sent to the server in the URL)
// and goes to the Talk page. The token is removed from the address bar and history first.
// Without a link: the box can say a six-digit pairing code aloud (POST /api/v1/auth/pair), typed here.
const zh = (navigator.languages?.[0] ?? navigator.language ?? '').toLowerCase().startsWith('zh');
const W = zh
  ? {
      signing: '正在登录…', no_code: '这个链接没有登录码。在设备上运行：homeagent webui link', failed: '无法登录', unreachable: '无法连接设备',
      pair_hint: '没有链接？设备可以把配对码读出来：听到的人都可以登录。', pair_ask: '请设备读出配对码', pair_label: '配对码', pair_go: '登录',
      pair_said: (s) => `设备已读出六位配对码，${Math.round(s / 60)} 分钟内有效。`, asking: '正在请设备读出…',
    }
  : {
      signing: 'Signing in…', no_code: 'This link has no sign-in code. On the box, run: homeagent webui link', failed: 'Could not sign in', unreachable: 'Could not reach the box',
      pair_hint: 'No link? The box can say a pairing code aloud: anyone who hears it may sign in.', pair_ask: 'Ask the box for a code', pair_label: 'Code', pair_go: 'Sign in',
      pair_said: (s) => `The box said a six-digit code; it works for ${Math.round(s / 60)} minutes.`, asking: 'Asking the box…',
    };
const $ = (id) => document.getElementById(id);
const msg = $('msg');
if (zh) document.documentElement.lang = 'zh-CN';
msg.textContent = W.signing;
const token = decodeURIComponent(location.hash.slice(1));
history.replaceState(null, '', '/login');

function fail(prefix, text) {
  msg.textContent = `${prefix}: ${text}`;
  msg.className = 'error';
}

async function login(body) {
  try {
    const r = await fetch('/api/v1/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), credentials: 'same-origin' });
    if (r.ok) return location.replace('/#/talk');
    const e = await r.json().catch(() => ({}));
    fail(W.failed, e.error ?? r.statusText);
  } catch (err) {
    fail(W.unreachable, err.message);
  }
}

if (token) {
  void login({ token });
} else {
  msg.textContent = W.no_code;
  const form = $('pair');
  const code = $('pair-code');
  const go = $('pair-go');
  $('pair-hint').textContent = W.pair_hint;
  $('pair-ask').textContent = W.pair_ask;
  $('pair-label').textContent = W.pair_label;
  go.textContent = W.pair_go;
  form.hidden = false;
  code.addEventListener('input', () => (go.disabled = code.value.replace(/[\s-]/g, '').length !== 6));
  $('pair-ask').addEventListener('click', async () => {
    msg.textContent = W.asking;
    msg.className = '';
    try {
      const r = await fetch('/api/v1/auth/pair', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', credentials: 'same-origin' });
      const v = await r.json().catch(() => ({}));
      if (!r.ok) return fail(W.failed, v.error ?? r.statusText);
      msg.textContent = W.pair_said(v.expires_in_s);
      code.disabled = false;
      code.focus();
    } catch (err) {
      fail(W.unreachable, err.message);
    }
  });
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void login({ code: code.value });
  });
}
