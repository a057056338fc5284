// The console's pages by path: every page and every connector has a deep
// link, and the browser's back and forward buttons work.

import { h, mount } from './dom.js';

// Each route: a path pattern, the module of its page, and the names of
// the pattern's groups. A page module exports render(ctx).
const routes = [
  [/^\/ui\/?$/, 'home', []],
  [/^\/ui\/connectors\/?$/, 'home', []],
  [/^\/ui\/new$/, 'create', []],
  [/^\/ui\/connectors\/([^/]+)(?:\/([a-z-]+))?\/?$/, 'connector', ['name', 'tab']],
  [/^\/ui\/agents(?:\/([^/]+))?\/?$/, 'agents', ['id']],
  [/^\/ui\/rollouts(?:\/([^/]+))?\/?$/, 'rollouts', ['id']],
  [/^\/ui\/maintenance(?:\/([^/]+))?\/?$/, 'maintenance', ['id']],
  [/^\/ui\/audit\/?$/, 'audit', []],
  [/^\/ui\/migrate\/?$/, 'migrate', []],
  [/^\/ui\/signin\/?$/, 'signin', []],
];

let page = null; // the page shown: { cleanups }
let guard = null; // a page's "leave with unsaved changes?" check

/** setGuard installs a check asked before leaving the page (null: none). */
export function setGuard(fn) { guard = fn; }

/** go shows the page at url (a path under /ui/, with its query). */
export function go(url, { replace = false } = {}) {
  if (guard && !guard()) return;
  guard = null;
  if (replace) history.replaceState(null, '', url); else history.pushState(null, '', url);
  show();
}

/** setQuery updates the address's query without showing the page anew. */
export function setQuery(params) {
  const u = new URL(location.href);
  u.search = '';
  for (const [k, v] of Object.entries(params)) {
    for (const one of [].concat(v)) if (one !== '' && one !== undefined && one !== null) u.searchParams.append(k, one);
  }
  history.replaceState(null, '', u.pathname + u.search + u.hash);
}

/** show renders the page the address names. */
export async function show() {
  if (page) for (const fn of page.cleanups) fn();
  const mine = { cleanups: [] };
  page = mine;
  const root = document.getElementById('main');
  const path = location.pathname;
  let match = null;
  for (const [re, mod, names] of routes) {
    const m = re.exec(path);
    if (m) { match = { mod, params: Object.fromEntries(names.map((n, i) => [n, m[i + 1] && decodeSegment(m[i + 1])])) }; break; }
  }
  markNav(path);
  if (!match) {
    document.title = 'Not found · Sluice';
    mount(root, h('h1', {}, 'Not found'), h('p', {}, `The console has no page at ${path}. `, h('a', { href: '/ui/' }, 'See the connectors.')));
    return;
  }
  const ctx = {
    root,
    params: match.params,
    query: new URLSearchParams(location.search),
    // every(ms, fn): call fn now and every ms while the page is shown.
    every(ms, fn) {
      let stopped = false;
      let timer;
      const tick = async () => {
        if (stopped) return;
        try { await fn(); } catch (e) { console.warn(e); }
        if (!stopped) timer = setTimeout(tick, ms);
      };
      mine.cleanups.push(() => { stopped = true; clearTimeout(timer); });
      return tick();
    },
    onLeave(fn) { mine.cleanups.push(fn); },
    live: () => page === mine,
  };
  try {
    const mod = await import(`./pages/${match.mod}.js`);
    if (page !== mine) return;
    await mod.render(ctx);
  } catch (e) {
    if (page !== mine) return;
    mount(root, h('h1', {}, 'Something went wrong'), h('p', { class: 'error', role: 'alert' }, e.message));
  }
}

// decodeSegment decodes a path segment; a malformed escape (a hand-typed
// "%") is taken as written rather than failing the page.
function decodeSegment(seg) {
  try { return decodeURIComponent(seg); } catch { return seg; }
}

function markNav(path) {
  for (const a of document.querySelectorAll('#nav a')) {
    const href = a.getAttribute('href');
    const on = href === '/ui/' ? (path === '/ui/' || path.startsWith('/ui/connectors') || path === '/ui/new') : path.startsWith(href);
    if (on) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
}

/** start routes in-console link clicks and the back button. */
export function start() {
  document.addEventListener('click', e => {
    const a = e.target.closest('a[href]');
    if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || a.target) return;
    const u = new URL(a.href, location.href);
    if (u.origin !== location.origin || !u.pathname.startsWith('/ui/') && u.pathname !== '/ui') return;
    if (u.pathname === location.pathname && u.search === location.search && u.hash) return;
    e.preventDefault();
    go(u.pathname + u.search);
  });
  window.addEventListener('popstate', () => show());
}
