// Two small tabs of a connector's page: its active topics (KIP-558) with
// their reset, and its entries of the audit trail.
//
// Stable hooks: #topics-list (ul), [data-action=reset-topics],
// #topics-status; #audit-since, #audit-limit, #audit-op (filters),
// #audit-table (rows [data-op=<operation>]), #audit-more.

import { h, mount, when, field } from '../dom.js';
import * as api from '../api.js';
import { confirm } from './modal.js';
import { configDiff, diffTable, diffSummary } from './diff.js';

/** renderTopics fills el with the connector's active topics. */
export async function renderTopics(el, ctx, info) {
  const name = info.name;
  const list = h('ul', { id: 'topics-list', class: 'topics' });
  const said = h('p', { id: 'topics-status', class: 'muted small', role: 'status', 'aria-live': 'polite', tabindex: '-1' });
  const failure = h('p', { class: 'error', role: 'alert', hidden: true });
  const reset = api.can('operator', name) ? h('button', { type: 'button', 'data-action': 'reset-topics', on: { click: doReset } }, 'Reset the topic list…') : null;
  mount(el,
    h('h2', {}, 'Active topics'),
    h('p', { class: 'muted' }, info.type === 'sink' ? 'The topics its tasks have consumed from since the list was last reset.' : 'The topics its tasks have produced to since the list was last reset.'),
    list, h('div', { class: 'toolbar' }, reset), said, failure);

  let last = '';
  async function load() {
    try {
      const r = await api.call('GET', `/connectors/${api.enc(name)}/topics`);
      if (!ctx.live()) return;
      failure.hidden = true;
      const topics = ((r && r[name]) || {}).topics || [];
      const sig = topics.join('\n');
      if (sig === last && list.childElementCount) return;
      last = sig;
      mount(list, topics.length ? topics.map(t => h('li', {}, h('code', {}, t))) : h('li', { class: 'muted' }, 'No topic recorded.'));
    } catch (e) {
      failure.textContent = `The topics could not be read: ${e.message}`;
      failure.hidden = false;
    }
  }

  async function doReset() {
    const ok = await confirm(`Reset the active topics of ${name}?`,
      h('p', {}, 'The list empties and fills again with the topics its tasks use from now on. No data and no offset changes.'), 'Reset');
    if (!ok) return;
    said.textContent = 'Resetting…';
    failure.hidden = true;
    try {
      await api.call('PUT', `/connectors/${api.enc(name)}/topics/reset`);
      said.textContent = 'The topic list was reset.';
      await load();
    } catch (e) {
      said.textContent = '';
      failure.textContent = `Reset failed: ${e.message}`;
      failure.hidden = false;
    }
    said.focus();
  }

  await ctx.every(2000, load);
}

const SINCE = [['1h', 'Last hour'], ['24h', 'Last 24 hours'], ['7d', 'Last 7 days'], ['30d', 'Last 30 days'], ['', 'Any time']];
const LIMITS = ['100', '500', '1000'];

/** renderAudit fills el with the connector's audit entries (admins). */
export async function renderAudit(el, ctx, info) {
  const name = info.name;
  if (!api.can('admin', name)) {
    mount(el, h('h2', {}, 'Audit'), h('p', { class: 'notice' }, `The audit trail is for admins of ${name}: your role does not cover it. The trail records every write with its principal.`));
    return;
  }
  const since = h('select', { id: 'audit-since', on: { change: load } }, SINCE.map(([v, l]) => h('option', { value: v, selected: v === '7d' }, l)));
  const limit = h('select', { id: 'audit-limit', on: { change: load } }, LIMITS.map(v => h('option', { value: v }, v)));
  const opSel = h('select', { id: 'audit-op', on: { change: draw } }, h('option', { value: '' }, 'Any operation'));
  const body = h('tbody');
  const more = h('p', { id: 'audit-more', class: 'muted small', 'aria-live': 'polite' });
  const failure = h('p', { class: 'error', role: 'alert', hidden: true });
  mount(el,
    h('h2', {}, 'Audit'),
    h('div', { class: 'filters' }, field('Since', since), field('At most', limit), field('Operation', opSel)),
    failure,
    h('table', { class: 'grid', id: 'audit-table' },
      h('caption', { class: 'sr-only' }, `Audit entries of ${name}, newest first`),
      h('thead', {}, h('tr', {}, ['Time', 'Principal', 'Operation', 'Result', 'Change'].map(c => h('th', { scope: 'col' }, c)))),
      body),
    more);

  let records = [];
  let seen = '';
  async function load() {
    const q = new URLSearchParams({ connector: name, limit: limit.value });
    if (since.value) q.set('since', since.value);
    try {
      const r = await api.call('GET', `/sluice/audit?${q}`);
      if (!ctx.live()) return;
      failure.hidden = true;
      const sig = JSON.stringify(r.records.map(x => [x.time, x.operation]));
      const said = r.more ? 'Older entries match too: widen "At most" to see them.' : `${r.records.length} entr${r.records.length === 1 ? 'y' : 'ies'}.`;
      if (more.textContent !== said) more.textContent = said; // a live region: say it once
      if (sig === seen) return; // unchanged: keep what the user opened
      seen = sig;
      records = r.records;
      const ops = [...new Set(records.map(x => x.operation))].sort();
      const cur = opSel.value;
      mount(opSel, h('option', { value: '' }, 'Any operation'), ops.map(o => h('option', { value: o, selected: o === cur }, o)));
      draw();
    } catch (e) {
      failure.textContent = `The audit trail could not be read: ${e.message}`;
      failure.hidden = false;
    }
  }

  function draw() {
    const shown = records.filter(r => !opSel.value || r.operation === opSel.value);
    mount(body, shown.length ? shown.map(row) : h('tr', {}, h('td', { colspan: 5, class: 'empty' }, 'No entry matches.')));
  }

  await ctx.every(5000, load);
}

function row(r) {
  const ok = r.status < 400;
  return h('tr', { 'data-op': r.operation },
    h('td', {}, when(r.time)),
    h('td', {}, r.principal, r.source ? h('div', { class: 'muted small' }, r.source) : null),
    h('td', {}, h('code', {}, r.operation), h('div', { class: 'muted small' }, `${r.method} ${r.path}${r.query ? `?${r.query}` : ''}`)),
    h('td', { class: ok ? 'ok' : 'error' }, `HTTP ${r.status}`, r.error ? h('div', { class: 'small' }, r.error) : null),
    h('td', {}, change(r)));
}

// change shows what a write did to the connector: its target state and
// its config keys, before and after (secrets arrive masked).
function change(r) {
  const b = r.before || null;
  const a = r.after || null;
  if (!b && !a) return h('span', { class: 'muted' }, '—');
  const state = b && a && b.target_state !== a.target_state ? `${b.target_state} → ${a.target_state}`
    : !b ? `created ${a.target_state}` : !a ? 'deleted' : null;
  if (r.configs_omitted) return h('span', {}, state || '', h('span', { class: 'muted small' }, ' (configs too large to record)'));
  const rows = configDiff(b && b.config, a && a.config);
  if (!rows.length) return state ? h('span', {}, state) : h('span', { class: 'muted' }, '—');
  return h('div', {}, state ? h('div', {}, state) : null,
    h('details', {}, h('summary', {}, `Config: ${diffSummary(rows)}`), diffTable(rows, 'Config change')));
}
