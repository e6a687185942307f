// Opens a session with the one-time link's token (the part after '#', never sent to the server in the URL)
// and goes to the Talk page. The token is removed from the address bar and history first.
const msg = document.getElementById('msg');
const token = decodeURIComponent(location.hash.slice(1));
history.replaceState(null, '', '/login');
if (!token) {
  msg.textContent = 'This link has no sign-in code. On the box, run: homeagent webui link';
} else {
  fetch('/api/v1/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }), credentials: 'same-origin' })
    .then(async (r) => {
      if (r.ok) return location.replace('/#/talk');
      const e = await r.json().catch(() => ({}));
      msg.textContent = `Could not sign in: ${e.error ?? r.statusText}`;
      msg.className = 'error';
    })
    .catch((err) => {
      msg.textContent = `Could not reach the box: ${err.message}`;
      msg.className = 'error';
    });
}
