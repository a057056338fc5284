// Maintenance windows: the open windows (/ui/maintenance), opening one
// (a selector, STOPPED or PAUSED, a reason) after a preview of what it
// will stop or pause, and one window (/ui/maintenance/{id}): what it
// holds, what closing it will give each connector back, and the close
// with each connector's outcome.
//
// Stable hooks: table#windows-table, tr[data-window=<id>],
// button#window-new, form#window-form, input[name=window-selector]
// (match|names), input#window-match, textarea#window-names,
// input[name=window-state] (STOPPED|PAUSED), input#window-reason,
// button#window-preview, table#window-preview-table, button#window-open,
// #window-form-error, table#window-connectors, tr[data-connector=<name>],
// button#window-close, table#window-outcomes, #window-outcome.

import { h, mount, link, badge, when, field } from '../dom.js';
import * as api from '../api.js';
import { go } from '../router.js';
import { confirm } from '../parts/modal.js';
import { outcome, missing, pageError, plural, focusFirst, remount, roughAgo } from '../parts/fleetkit.js';

export async function render(ctx) {
  if (ctx.params.id) return renderWindow(ctx, ctx.params.id);
  return renderList(ctx);
}

// statuses reads every connector's state now, by name (the console's
// view of what a window holds and will restore).
async function statuses() {
  const all = await api.call('GET', '/connectors?expand=status');
  return Object.fromEntries(Object.entries(all).map(([n, v]) => [n, v.status && v.status.connector ? v.status.connector.state : 'UNASSIGNED']));
}

// held is the state a window set on a connector: a PAUSED window leaves a
// STOPPED connector stopped.
const held = (w, c) => (w.state === 'PAUSED' && c.previous === 'STOPPED' ? 'STOPPED' : w.state);

async function renderList(ctx) {
  document.title = 'Maintenance · Sluice';
  const tbody = h('tbody');
  const failure = h('p', { class: 'error', role: 'alert', hidden: true });
  const formBox = h('div');
  const newBtn = api.can('operator') ? h('button', { id: 'window-new', type: 'button', class: 'primary', on: { click: () => openForm(formBox, newBtn) } }, 'Open a window…') : null;
  mount(ctx.root,
    h('div', { class: 'page-head' }, h('h1', {}, 'Maintenance windows'), newBtn),
    h('p', { class: 'muted' }, 'A window holds connectors STOPPED or PAUSED — a broker upgrade, a database migration — and gives each exactly its previous state back when it closes.'),
    formBox, failure,
    h('table', { class: 'grid', id: 'windows-table' },
      h('caption', { class: 'sr-only' }, 'Open maintenance windows, oldest first'),
      h('thead', {}, h('tr', {}, ['Window', 'Holds', 'Connectors', 'Reason', 'Opened by', 'Opened'].map(c => h('th', { scope: 'col' }, c)))),
      tbody));
  await ctx.every(2000, async () => {
    let ws;
    try {
      ws = (await api.call('GET', '/sluice/maintenance')).windows || [];
      failure.hidden = true;
    } catch (e) {
      failure.textContent = missing(e, 'maintenance windows (GET /sluice/maintenance)');
      failure.hidden = false;
      return;
    }
    remount(tbody, JSON.stringify(ws.map(w => [w, roughAgo(w.opened_at)])), () => ws.length ? ws.map(w => h('tr', { 'data-window': w.id },
      h('th', { scope: 'row' }, link(`/ui/maintenance/${api.enc(w.id)}`, w.id, { class: 'name' })),
      h('td', {}, badge(w.state)),
      h('td', {}, plural(w.connectors.length, 'connector'), h('div', { class: 'muted small' }, w.selector.match ? `match ${w.selector.match}` : (w.selector.names || []).join(', '))),
      h('td', {}, w.reason || h('span', { class: 'muted' }, '—')),
      h('td', {}, w.principal || '—'),
      h('td', { title: w.opened_at }, roughAgo(w.opened_at))))
      : h('tr', {}, h('td', { colspan: 6, class: 'empty' }, 'No window is open.')));
  });
}

// openForm shows the form that opens a window, with its preview.
function openForm(box, back) {
  const err = h('p', { id: 'window-form-error', class: 'error', role: 'alert', hidden: true });
  const radio = (name, value, checked) => h('input', { type: 'radio', name, value, checked });
  const selMatch = radio('window-selector', 'match', true);
  const selNames = radio('window-selector', 'names', false);
  const match = h('input', { id: 'window-match', placeholder: 'orders-*', spellcheck: 'false', autocomplete: 'off' });
  const names = h('textarea', { id: 'window-names', rows: 3, spellcheck: 'false', placeholder: 'one name a line' });
  const stStopped = radio('window-state', 'STOPPED', true);
  const stPaused = radio('window-state', 'PAUSED', false);
  const reason = h('input', { id: 'window-reason', placeholder: 'broker upgrade' });
  const preview = h('div', { 'aria-live': 'polite' });
  const openBtn = h('button', { id: 'window-open', type: 'submit', class: 'primary', disabled: true }, 'Open the window…');
  let plan = null;
  const stale = () => { plan = null; openBtn.disabled = true; mount(preview); };
  for (const el of [selMatch, selNames, match, names, stStopped, stPaused]) el.addEventListener('input', stale);
  const matchField = field('Glob', match, 'Go path.Match syntax: *, ?, [a-z].');
  const namesField = field('Names', names, 'One connector name a line (or comma separated).');
  namesField.hidden = true;
  // Only the selector chosen is shown (and sent).
  for (const el of [selMatch, selNames]) el.addEventListener('change', () => { matchField.hidden = !selMatch.checked; namesField.hidden = !selNames.checked; });

  function body() {
    const b = { state: stPaused.checked ? 'PAUSED' : 'STOPPED' };
    if (reason.value.trim()) b.reason = reason.value.trim();
    if (selMatch.checked) {
      if (!match.value.trim()) throw new Error('Give a glob to match connector names, such as orders-*.');
      b.match = match.value.trim();
    } else {
      b.names = names.value.split(/[\n,]/).map(s => s.trim()).filter(Boolean);
      if (!b.names.length) throw new Error('Give at least one connector name.');
    }
    return b;
  }

  async function doPreview() {
    err.hidden = true;
    let b, now;
    try { b = body(); now = await statuses(); } catch (e) { err.textContent = e.message; err.hidden = false; focusFirst(err); return; }
    const chosen = b.match ? Object.keys(now).filter(n => api.glob(b.match, n)).sort() : b.names;
    const unknown = chosen.filter(n => !(n in now));
    plan = chosen.length && !unknown.length ? { b, n: chosen.length } : null;
    openBtn.disabled = !plan;
    mount(preview, h('div', { class: 'card fk-plan' },
      h('h2', { id: 'window-preview-h', tabindex: '-1' }, chosen.length ? `The window would hold ${plural(chosen.length, 'connector')} ${b.state}` : 'No connector matches'),
      unknown.length ? h('p', { class: 'error' }, `Unknown: ${unknown.join(', ')}. The window would be refused (404).`) : null,
      chosen.length ? h('table', { class: 'grid', id: 'window-preview-table', 'aria-labelledby': 'window-preview-h' },
        h('thead', {}, h('tr', {}, ['Connector', 'Now', 'During the window', 'When it closes'].map(c => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, chosen.map(n => {
          const state = now[n];
          const during = b.state === 'PAUSED' && state === 'STOPPED' ? 'STOPPED' : b.state;
          return h('tr', {}, h('th', { scope: 'row' }, n), h('td', {}, state ? badge(state) : '—'), h('td', {}, badge(during)),
            h('td', {}, state ? `back to ${state === 'PAUSED' || state === 'STOPPED' ? state : 'RUNNING'}` : '—'));
        }))) : null,
      h('p', { class: 'muted' }, 'A connector already in another open window makes the whole window refused (409); nothing changes then.')));
    focusFirst(preview.querySelector('h2'));
  }

  const form = h('form', { id: 'window-form', class: 'card', on: { submit: async e => {
    e.preventDefault();
    if (!plan) { doPreview(); return; } // Enter in a field previews first
    if (!await confirm(`${plan.b.state === 'STOPPED' ? 'Stop' : 'Pause'} ${plural(plan.n, 'connector')} for maintenance?`,
      h('p', {}, `Each connector's state is recorded, then it is ${plan.b.state === 'STOPPED' ? 'stopped' : 'paused'}. Closing the window gives each its state back.`),
      `Open the window: ${plural(plan.n, 'connector')}`)) return;
    openBtn.disabled = true;
    try {
      const w = await api.call('POST', '/sluice/maintenance', plan.b);
      go(`/ui/maintenance/${api.enc(w.id)}`);
    } catch (e2) {
      err.textContent = missing(e2, 'maintenance windows (POST /sluice/maintenance)');
      err.hidden = false;
      openBtn.disabled = false;
      focusFirst(err);
    }
  } } },
  h('h2', { id: 'window-form-h' }, 'Open a maintenance window'),
  h('fieldset', {}, h('legend', {}, 'Connectors'),
    h('div', { class: 'fk-row' }, h('label', { class: 'fk-check' }, selMatch, ' Names matching a glob'), h('label', { class: 'fk-check' }, selNames, ' These names')),
    matchField, namesField),
  h('fieldset', {}, h('legend', {}, 'Hold them'),
    h('label', { class: 'fk-check' }, stStopped, ' STOPPED (tasks shut down; offsets can be edited)'),
    h('label', { class: 'fk-check' }, stPaused, ' PAUSED (tasks kept, not polled)')),
  field('Reason', reason, 'Shown with the window and recorded in the audit trail with your request.'),
  err,
  h('div', { class: 'actions' },
    h('button', { type: 'button', on: { click: () => { mount(box); focusFirst(back); } } }, 'Cancel'),
    h('button', { id: 'window-preview', type: 'button', on: { click: doPreview } }, 'Preview'),
    openBtn));
  mount(box, form, preview);
  match.focus();
}

async function renderWindow(ctx, id) {
  document.title = `Window ${id} · Sluice`;
  const path = `/sluice/maintenance/${api.enc(id)}`;
  let w;
  try {
    w = await api.call('GET', path);
  } catch (e) {
    pageError(ctx.root, `Window ${id}`, e.status === 404 && !/^HTTP/.test(e.message)
      ? `${e.message}: it may have been closed. See the open windows, or the audit trail (maintenance.close).` : missing(e, 'maintenance windows'));
    return;
  }
  const say = outcome('window-outcome');
  const actions = h('div', { class: 'actions' });
  const facts = h('dl', { class: 'kv' });
  const tbody = h('tbody');
  const result = h('div');
  const holds = h('section', { 'aria-labelledby': 'window-connectors-h' },
    h('h2', { id: 'window-connectors-h' }, 'What it holds, and what closing it restores'),
    h('table', { class: 'grid', id: 'window-connectors', 'aria-labelledby': 'window-connectors-h' },
      h('thead', {}, h('tr', {}, ['Connector', 'Before the window', 'Held', 'Now', 'When it closes'].map(c => h('th', { scope: 'col' }, c)))),
      tbody));
  mount(ctx.root, h('p', {}, link('/ui/maintenance', '‹ All windows')),
    h('div', { class: 'page-head' }, h('h1', {}, `Window ${id}`), actions), say.el, result,
    h('div', { class: 'card' }, facts),
    holds);
  let now = {};
  let closed = false;
  let closing = false; // a close under way: the poll leaves the page to it

  // fate says what closing will do to one connector, as the server will
  // decide it: its previous state back if its state is still the one the
  // window set, else left as it is (changed by hand), or skipped if gone.
  const fate = c => {
    if (c.outcome) return { word: c.outcome, restores: false };
    if (!(c.name in now)) return { word: 'skipped: it no longer exists', restores: false };
    if (now[c.name] !== held(w, c)) return { word: `left ${now[c.name]}: changed by hand during the window`, restores: false };
    return { word: `back to ${c.previous}`, restores: true };
  };

  function draw() {
    holds.hidden = closed;
    const restores = w.connectors.filter(c => fate(c).restores).length;
    remount(actions, JSON.stringify([closed, restores, w.connectors.length]), () => !closed && api.can('operator')
      ? h('button', { id: 'window-close', type: 'button', class: 'primary', on: { click: () => close() } }, 'Close the window…') : null);
    remount(facts, JSON.stringify([w, closed]), () => [
      h('dt', {}, 'Holds'), h('dd', {}, badge(w.state), ' ', plural(w.connectors.length, 'connector')),
      h('dt', {}, 'Selector'), h('dd', {}, w.selector.match ? `match ${w.selector.match}` : (w.selector.names || []).join(', ')),
      h('dt', {}, 'Reason'), h('dd', {}, w.reason || '—'),
      h('dt', {}, 'Opened'), h('dd', {}, when(w.opened_at), ` by ${w.principal || 'anonymous'}`),
    ]);
    remount(tbody, JSON.stringify([w.connectors, now]), () => w.connectors.map(c => h('tr', { 'data-connector': c.name },
      h('th', { scope: 'row' }, link(`/ui/connectors/${api.enc(c.name)}`, c.name)),
      h('td', {}, badge(c.previous)),
      h('td', {}, badge(held(w, c))),
      h('td', {}, c.state ? badge(c.state) : c.name in now ? badge(now[c.name]) : '—'),
      h('td', { class: fate(c).restores ? 'ok' : null }, fate(c).word))));
  }

  async function close() {
    // The confirmation counts what closing restores now, not 6 s ago.
    try { now = await statuses(); } catch { /* counted from the last view */ }
    draw();
    const restores = w.connectors.filter(c => fate(c).restores).length;
    const n = w.connectors.length;
    const left = n - restores;
    if (!await confirm(`Close window ${id}?`, h('div', {},
      h('p', {}, `${plural(restores, 'connector')} of ${n} ${restores === 1 ? 'goes' : 'go'} back to ${restores === 1 ? 'its' : 'their'} state from before the window.`),
      left ? h('p', {}, `${plural(left, 'connector')} changed by hand or deleted during the window ${left === 1 ? 'is' : 'are'} left as ${left === 1 ? 'it is' : 'they are'}.`) : null),
    `Close: restore ${restores} of ${n}`)) return;
    closing = true;
    try {
      w = await api.call('DELETE', path);
      closed = true;
      say.ok(`Window ${id} closed.`);
      mount(result, h('h2', {}, 'Outcome per connector'),
        h('table', { class: 'grid', id: 'window-outcomes' },
          h('thead', {}, h('tr', {}, ['Connector', 'Before the window', 'Outcome', 'State now'].map(c => h('th', { scope: 'col' }, c)))),
          h('tbody', {}, w.connectors.map(c => h('tr', {}, h('th', { scope: 'row' }, c.name), h('td', {}, badge(c.previous)),
            h('td', { class: c.outcome === 'restored' ? 'ok' : /^failed/.test(c.outcome || '') ? 'error' : null }, c.outcome || '—'),
            h('td', {}, c.state ? badge(c.state) : '—'))))),
        h('p', {}, link('/ui/maintenance', 'See the open windows')));
    } catch (e) {
      say.fail(`Close: ${e.message}${e.status >= 500 || e.status === 409 ? ' The window stays open with the outcomes reached so far: close it again to restore the others.' : ''}`);
    }
    closing = false;
    focusFirst(say.el);
    draw();
  }

  // Every connector's status is one read of the whole fleet: every 6 s
  // is enough to see a connector changed by hand during the window.
  let tick = 0;
  await ctx.every(2000, async () => {
    if (closed || closing) return;
    if (tick++ % 3 === 0) {
      try { now = await statuses(); } catch { /* the table keeps its last view */ }
    }
    try { w = await api.call('GET', path); } catch (e) { if (e.status === 404 && !closing && !closed) { closed = true; say.ok(`${e.message}: it was closed.`); } }
    if (!closing) draw();
  });
}
