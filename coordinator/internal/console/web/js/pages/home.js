// The fleet home: every connector the principal may see, what needs
// attention first, with search, filters and bulk actions on a selection.
// Paging and filtering happen on the server (GET /sluice/fleet/connectors),
// so the page stays fast with thousands of connectors.

import { h, mount, link, badge, num, ago, debounce } from '../dom.js';
import * as api from '../api.js';
import { setQuery } from '../router.js';
import { confirm, results } from '../parts/modal.js';

const HEALTH = ['failed', 'degraded', 'unassigned', 'paused', 'stopped', 'healthy'];
const STATES = ['RUNNING', 'PAUSED', 'STOPPED', 'FAILED', 'UNASSIGNED', 'RESTARTING'];
const FILTERS = ['q', 'health', 'state', 'type', 'agent', 'plugin', 'label', 'sort'];
const PAGE = 50;

export async function render(ctx) {
  document.title = 'Connectors · Sluice';
  const f = {};
  for (const k of FILTERS) f[k] = k === 'label' ? ctx.query.getAll(k) : (ctx.query.get(k) || '');
  let offset = Number(ctx.query.get('offset')) || 0;
  const selected = new Set();
  let last = null;

  const counts = h('div', { class: 'chips', role: 'group', 'aria-label': 'Health' });
  const tbody = h('tbody');
  const summary = h('p', { class: 'muted', 'aria-live': 'polite' });
  const pager = h('div', { class: 'pager' });
  const bulk = h('div', { class: 'bulk', role: 'toolbar', 'aria-label': 'Actions on the selected connectors' });
  const failure = h('p', { class: 'error', role: 'alert', hidden: true });

  const input = (k, label, props = {}) => h('input', { type: 'search', name: k, value: f[k], 'aria-label': label, placeholder: label, ...props,
    on: { input: debounce(e => { f[k] = e.target.value.trim(); offset = 0; refresh(); }, 250) } });
  const select = (k, label, options) => h('select', { name: k, 'aria-label': label, on: { change: e => { f[k] = e.target.value; offset = 0; refresh(); } } },
    h('option', { value: '' }, label), options.map(o => h('option', { value: o.toLowerCase ? o : o, selected: f[k] === o }, o)));
  const labelInput = h('input', { type: 'search', name: 'label', value: f.label.join(','), placeholder: 'label k=v', 'aria-label': 'Labels (k=v, comma separated)',
    on: { input: debounce(e => { f.label = e.target.value.split(',').map(s => s.trim()).filter(Boolean); offset = 0; refresh(); }, 250) } });

  const selectAll = h('input', { type: 'checkbox', 'aria-label': 'Select every connector on this page', on: { change: e => {
    for (const c of last ? last.connectors : []) { if (e.target.checked) selected.add(c.name); else selected.delete(c.name); }
    draw();
  } } });

  mount(ctx.root,
    h('div', { class: 'page-head' },
      h('h1', {}, 'Connectors'),
      api.can('operator') ? link('/ui/new', 'New connector', { class: 'button primary' }) : null),
    counts,
    h('div', { class: 'filters', role: 'search' },
      input('q', 'Search by name', { class: 'grow' }),
      select('health', 'Any health', HEALTH),
      select('state', 'Any state', STATES),
      select('type', 'Any type', ['source', 'sink']),
      input('agent', 'Agent'),
      input('plugin', 'Plugin'),
      labelInput,
      select('sort', 'Sort: attention', ['name', 'changed'])),
    bulk, failure,
    h('table', { class: 'grid fleet' },
      h('caption', { class: 'sr-only' }, 'Connectors, what needs attention first'),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col', class: 'pick' }, selectAll),
        ['Name', 'Health', 'State', 'Type', 'Plugin', 'Tasks', 'Agents', 'Sink lag', 'Changed'].map(c => h('th', { scope: 'col' }, c)))),
      tbody),
    summary, pager);

  async function load() {
    const q = new URLSearchParams();
    for (const k of FILTERS) for (const v of [].concat(f[k])) if (v) q.append(k, v);
    q.set('offset', offset);
    q.set('limit', PAGE);
    setQuery(Object.fromEntries([...FILTERS.map(k => [k, f[k]]), ['offset', offset || '']]));
    return api.call('GET', `/sluice/fleet/connectors?${q}`);
  }

  async function refresh() {
    try {
      last = await load();
      failure.hidden = true;
      draw();
    } catch (e) {
      failure.textContent = e.message;
      failure.hidden = false;
    }
  }

  function draw() {
    const d = last;
    if (!d) return;
    const hc = (d.counts && d.counts.health) || {};
    mount(counts, HEALTH.filter(x => hc[x]).map(x => h('button', { type: 'button', class: `chip h-${x}`, 'aria-pressed': String(f.health === x),
      on: { click: () => { f.health = f.health === x ? '' : x; offset = 0; ctx.root.querySelector('select[name=health]').value = f.health; refresh(); } } },
    badge(x), ' ', num(hc[x]))));
    mount(tbody, d.connectors.length ? d.connectors.map(row) : h('tr', {}, h('td', { colspan: 10, class: 'empty' },
      d.total === 0 && !FILTERS.some(k => [].concat(f[k]).some(Boolean)) ? 'No connector yet.' : 'No connector matches these filters.')));
    selectAll.checked = d.connectors.length > 0 && d.connectors.every(c => selected.has(c.name));
    const end = Math.min(d.offset + d.connectors.length, d.total);
    summary.textContent = d.total ? `${num(d.offset + 1)}–${num(end)} of ${num(d.total)} connectors` : '';
    mount(pager,
      h('button', { type: 'button', disabled: d.offset === 0, on: { click: () => { offset = Math.max(0, offset - PAGE); refresh(); } } }, '‹ Previous'),
      h('button', { type: 'button', disabled: end >= d.total, on: { click: () => { offset += PAGE; refresh(); } } }, 'Next ›'));
    drawBulk();
  }

  function row(c) {
    const href = `/ui/connectors/${api.enc(c.name)}`;
    return h('tr', { class: `h-${c.health}` },
      h('td', { class: 'pick' }, h('input', { type: 'checkbox', checked: selected.has(c.name), 'aria-label': `Select ${c.name}`,
        on: { change: e => { if (e.target.checked) selected.add(c.name); else selected.delete(c.name); drawBulk(); } } })),
      h('td', {}, link(href, c.name, { class: 'name' }),
        c.labels && Object.keys(c.labels).length ? h('div', { class: 'labels' }, Object.entries(c.labels).map(([k, v]) => h('span', { class: 'label' }, `${k}=${v}`))) : null),
      h('td', {}, badge(c.health), c.reason ? h('div', { class: 'reason' }, c.reason) : null),
      h('td', {}, c.state ? badge(c.state) : '—'),
      h('td', {}, c.type || '—'),
      h('td', { title: c.class }, shortClass(c.class), c.version ? h('div', { class: 'muted small' }, c.version) : null),
      h('td', { class: 'num' }, `${num(c.tasks_running)} / ${num(c.tasks_total)}`),
      h('td', {}, (c.agents || []).join(', ') || '—'),
      h('td', { class: 'num', title: c.sink_lag_at ? `read ${ago(c.sink_lag_at)}` : null }, c.sink_lag === null || c.sink_lag === undefined ? '—' : num(c.sink_lag)),
      h('td', {}, ago(c.changed)));
  }

  function drawBulk() {
    if (!selected.size) { mount(bulk); bulk.hidden = true; return; }
    bulk.hidden = false;
    const names = [...selected];
    const act = (label, fn, kind, role) => api.can(role) ? h('button', { type: 'button', class: kind, on: { click: fn } }, label) : null;
    mount(bulk,
      h('strong', {}, `${names.length} selected`),
      act('Pause', () => runBulk('pause', names), '', 'operator'),
      act('Resume', () => runBulk('resume', names), '', 'operator'),
      act('Stop', () => runBulk('stop', names), '', 'operator'),
      act('Restart failed tasks', () => runBulk('restart', names), '', 'operator'),
      act('Delete', () => deleteAll(names), 'danger', 'admin'),
      h('button', { type: 'button', class: 'link', on: { click: () => { selected.clear(); draw(); } } }, 'Clear selection'));
  }

  async function runBulk(action, names) {
    const word = action === 'restart' ? 'Restart the failed tasks of' : action[0].toUpperCase() + action.slice(1);
    const n = names.length;
    if (!await confirm(`${word} ${n} connector${n === 1 ? '' : 's'}?`, list(names), `${word} ${n}`)) return;
    const q = action === 'restart' ? '?includeTasks=true&onlyFailed=true' : '';
    try {
      const res = await api.call('POST', `/sluice/connectors/${action}${q}`, { names });
      await results(`${word}: results`, res.results.map(r => ({ name: r.connector, ok: r.status < 300, message: r.message || `done (HTTP ${r.status})` })));
    } catch (e) {
      await results(`${word}: refused`, names.map(name => ({ name, ok: false, message: e.message })));
    }
    selected.clear();
    refresh();
  }

  async function deleteAll(names) {
    const n = names.length;
    if (!await confirm(`Delete ${n} connector${n === 1 ? '' : 's'}?`, h('div', {}, h('p', {}, 'Their configs go; their offsets stay in Kafka. This cannot be undone from the console.'), list(names)), `Delete ${n}`, 'danger')) return;
    const out = [];
    for (const name of names) {
      try { await api.call('DELETE', `/connectors/${api.enc(name)}`); out.push({ name, ok: true, message: 'deleted' }); } catch (e) { out.push({ name, ok: false, message: e.message }); }
    }
    await results('Delete: results', out);
    selected.clear();
    refresh();
  }

  await ctx.every(2000, refresh);
}

function list(names) {
  const shown = names.slice(0, 20);
  return h('ul', { class: 'names' }, shown.map(n => h('li', {}, n)), names.length > 20 ? h('li', { class: 'muted' }, `and ${names.length - 20} more`) : null);
}

function shortClass(cls) {
  if (!cls) return '—';
  const i = cls.lastIndexOf('.');
  return i < 0 ? cls : cls.slice(i + 1);
}
