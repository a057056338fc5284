// The console starts here: who is signed in, the header, then the page the
// address names.

import { h, mount } from './dom.js';
import * as api from './api.js';
import { go, show, start } from './router.js';
import { banner } from './parts/banner.js';

async function boot() {
  start();
  api.onEvent(ev => {
    if (ev.type === 'signed-out' && location.pathname !== '/ui/signin') {
      go(`/ui/signin?next=${encodeURIComponent(location.pathname + location.search)}&reason=${encodeURIComponent(ev.message)}`, { replace: true });
    }
    banner(ev);
  });
  try {
    await api.loadSession();
  } catch (e) {
    mount(document.getElementById('main'), h('h1', {}, 'The coordinator did not answer'), h('p', { class: 'error', role: 'alert' }, e.message));
    return;
  }
  renderWho();
  const s = api.current();
  if (s.auth && !s.signed_in && location.pathname !== '/ui/signin') {
    const q = new URLSearchParams({ next: location.pathname + location.search });
    if (s.reason) q.set('reason', s.reason);
    history.replaceState(null, '', `/ui/signin?${q}`);
  }
  show();
}

/** renderWho shows who is signed in, with the sign-out button. */
export function renderWho() {
  const s = api.current();
  const who = document.getElementById('who');
  if (!s.auth) { mount(who, h('span', { class: 'muted', title: 'REST authentication is off' }, 'open access')); return; }
  if (!s.signed_in) { mount(who); return; }
  const roles = s.principal.grants.map(g => g.role + (g.connectors ? ` (${g.connectors.join(', ')})` : '') + (g.tenants ? ` (tenants ${g.tenants.join(', ')})` : '')).join('; ') || 'no role';
  mount(who,
    h('span', { class: 'user', title: roles }, s.principal.kind),
    h('button', { class: 'link', type: 'button', on: { click: async () => {
      try { await api.signOut(); } catch (e) { /* the cookie is cleared either way */ }
      renderWho();
      go('/ui/signin', { replace: true });
    } } }, 'Sign out'));
}

boot();
