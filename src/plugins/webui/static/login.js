// Opens a session with the one-time link's token (the part after '#', never sent to the server in the URL)
// and goes to the Talk page. The token is removed from the address bar and history first.
const zh = (navigator.languages?.[0] ?? navigator.language ?? '').toLowerCase().startsWith('zh');
const W = zh
  ? { signing: '正在登录…', no_code: '这个链接没有登录码。在设备上运行：homeagent webui link', failed: '无法登录', unreachable: '无法连接设备' }
  : { signing: 'Signing in…', no_code: 'This link has no sign-in code. On the box, run: homeagent webui link', failed: 'Could not sign in', unreachable: 'Could not reach the box' };
const msg = document.getElementById('msg');
if (zh) document.documentElement.lang = 'zh-CN';
msg.textContent = W.signing;
const token = decodeURIComponent(location.hash.slice(1));
history.replaceState(null, '', '/login');
if (!token) {
  msg.textContent = W.no_code;
} else {
  fetch('/api/v1/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }), credentials: 'same-origin' })
    .then(async (r) => {
      if (r.ok) return location.replace('/#/talk');
      const e = await r.json().catch(() => ({}));
      msg.textContent = `${W.failed}: ${e.error ?? r.statusText}`;
      msg.className = 'error';
    })
    .catch((err) => {
      msg.textContent = `${W.unreachable}: ${err.message}`;
      msg.className = 'error';
    });
}
