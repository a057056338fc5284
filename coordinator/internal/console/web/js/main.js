// The console starts here: who is signed in, the header, then the page the
// address names.

import { h, mount } from './dom.js';
import * as api from './api.js';
import { go, show, start } from './router.js';
import { banner } from './parts/banner.js';

// REASON keys why the sign-in page is shown (the server's message), kept
// out of the address: a link of someone else's could put any text there.
export const REASON = 'sluice-signin-reason';

async function boot() {
  start();
  api.onEvent(ev => {
    if (ev.type === 'signed-out' && location.pathname !== '/ui/signin') {
      sessionStorage.setItem(REASON, ev.message);
      go(`/ui/signin?next=${encodeURIComponent(location.pathname + location.search)}`, { replace: true });
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
  watchLeader();
  const s = api.current();
  if (s.auth && !s.signed_in && location.pathname !== '/ui/signin') {
    const q = new URLSearchParams({ next: location.pathname + location.search });
    if (s.reason) sessionStorage.setItem(REASON, s.reason);
    history.replaceState(null, '', `/ui/signin?${q}`);
  }
  show();
}

/**
 * watchLeader asks GET /readyz every 3 s whether a leader is known, so the
 * banner says that writes wait for one before a write fails. A coordinator
 * with no leader still answers 200 (it serves reads) with its "leader"
 * check not ok; a 503 whose message names the leader says the same.
 */
function watchLeader() {
  const tick = async () => {
    const s = api.current();
    if (s.auth && !s.signed_in) return; // /readyz needs a principal
    try {
      const r = await api.call('GET', '/readyz');
      const lead = (r.checks || []).find(c => c.name === 'leader');
      banner(lead && !lead.ok ? { type: 'leaderless', message: lead.message } : { type: 'leader' });
    } catch (e) {
      if (e.status === 503 && /leader/i.test(e.message)) banner({ type: 'leaderless', message: e.message });
    }
  };
  tick();
  setInterval(tick, 3000);
}

/** renderWho shows who is signed in, with the sign-out button. */
export function renderWho() {
  const s = api.current();
  const who = document.getElementById('who');
  // The audit trail and migrations are admin routes: their pages are not
  // offered to whoever holds no admin grant.
  for (const a of document.querySelectorAll('#nav a[href="/ui/audit"], #nav a[href="/ui/migrate"]')) a.hidden = !api.can('admin');
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
