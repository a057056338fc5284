// A connector's page, /ui/connectors/{name}[/{tab}]: its state and the
// actions the principal may take, and one tab — overview, config, offsets,
// topics or audit — each with a deep link. The state is read every 2 s
// while the page is shown, and each tab gets it.
//
// Stable hooks for browser tests:
//   #conn-name (h1), #conn-state (the state badge's box),
//   nav[aria-label="Connector"] a[data-tab=<tab>] (the tabs),
//   #conn-actions button[data-action=pause|resume|stop|restart|
//   restart-failed|delete|move|rename|copy], #conn-action-status (live
//   result), #conn-action-error (alert), #conn-tab (the tab's box),
//   #conn-delete-offsets (the delete dialog's checkbox).
// Each tab's module lists its own: parts/connoverview.js,
// parts/connconfig.js (and parts/configform.js), parts/conntabs.js.

import { h, mount, badge } from '../dom.js';
import * as api from '../api.js';
import { actions } from '../parts/connactions.js';

const TABS = [
  ['overview', 'Overview'],
  ['config', 'Config'],
  ['offsets', 'Offsets'],
  ['topics', 'Topics'],
  ['audit', 'Audit'],
];

export async function render(ctx) {
  const name = ctx.params.name;
  const tab = ctx.params.tab || 'overview';
  const base = `/ui/connectors/${api.enc(name)}`;
  const label = (TABS.find(([t]) => t === tab) || [])[1];
  document.title = label && tab !== 'overview' ? `${name} · ${label} · Sluice` : `${name} · Sluice`;
  if (!label) {
    mount(ctx.root, h('h1', {}, name), h('p', {}, `A connector's page has no tab "${tab}". `, h('a', { href: base }, 'See its overview.')));
    return;
  }
  let conn;
  try {
    conn = await api.call('GET', `/connectors/${api.enc(name)}`);
  } catch (e) {
    mount(ctx.root, h('h1', {}, name), h('p', { class: 'error', role: 'alert' }, e.message),
      h('p', {}, h('a', { href: '/ui/' }, 'See the connectors.')));
    return;
  }
  if (!ctx.live()) return;

  // info is what every tab and flow gets; state and status stay current.
  const info = { name, type: conn.type, state: '', config: conn.config, status: null };
  const stateBox = h('span', { id: 'conn-state', 'aria-live': 'polite' });
  const typeBox = h('span', { class: 'muted' }, conn.type);
  const bar = actions(info, { refresh: () => poll(), onDeleted: () => {} });
  const tabEl = h('div', { id: 'conn-tab', class: `conn-tab tab-${tab}` });
  const stale = h('p', { class: 'error', role: 'alert', hidden: true });
  const listeners = new Set();
  info.onStatus = fn => { listeners.add(fn); return () => listeners.delete(fn); };

  mount(ctx.root,
    h('p', { class: 'crumbs' }, h('a', { href: '/ui/' }, '‹ All connectors')),
    h('div', { class: 'page-head conn-head' },
      h('h1', { id: 'conn-name' }, name),
      stateBox, typeBox),
    bar.el,
    stale,
    h('nav', { class: 'tabs', 'aria-label': 'Connector' }, TABS.map(([t, word]) => h('a', {
      href: t === 'overview' ? base : `${base}/${t}`, 'data-tab': t, 'aria-current': t === tab ? 'page' : false,
    }, word))),
    tabEl);

  async function poll() {
    try {
      const st = await api.call('GET', `/connectors/${api.enc(name)}/status`);
      if (!ctx.live()) return;
      stale.hidden = true;
      info.status = st;
      // The box is a live region: it changes (and is announced) only
      // when the state does.
      if (st.connector.state !== info.state || !stateBox.firstChild) mount(stateBox, badge(st.connector.state, 'Connector state'));
      info.state = st.connector.state;
      bar.update(st);
      for (const fn of listeners) fn(st);
    } catch (e) {
      if (!ctx.live()) return;
      if (e.status === 404) {
        stale.textContent = `${e.message}: it was deleted. `;
        stale.append(h('a', { href: '/ui/' }, 'See the connectors.'));
      } else {
        stale.textContent = `The state could not be read: ${e.message}`;
      }
      stale.hidden = false;
    }
  }
  await poll();
  if (!ctx.live()) return;

  try {
    await showTab(tab, tabEl, ctx, info);
  } catch (e) {
    if (ctx.live()) mount(tabEl, h('p', { class: 'error', role: 'alert' }, `This tab could not be shown: ${e.message}`));
  }
  ctx.every(2000, poll);
}

// showTab loads the tab's module when it is asked for: a page of one
// connector loads no code of the tabs it does not show.
async function showTab(tab, el, ctx, info) {
  switch (tab) {
    case 'overview': return (await import('../parts/connoverview.js')).renderOverview(el, ctx, info);
    case 'config': return (await import('../parts/connconfig.js')).renderConfig(el, ctx, info);
    case 'topics': return (await import('../parts/conntabs.js')).renderTopics(el, ctx, info);
    case 'audit': return (await import('../parts/conntabs.js')).renderAudit(el, ctx, info);
    case 'offsets': {
      let m;
      try {
        m = await import('../parts/offsets.js');
      } catch (e) {
        mount(el, h('p', { class: 'error', role: 'alert' }, `The offsets tab could not be loaded: ${e.message}`));
        return undefined;
      }
      return m.renderOffsets(el, ctx, info);
    }
  }
  return undefined;
}
