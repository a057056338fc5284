// The audit trail of REST writes (/ui/audit), newest first: filters by
// connector, principal, operation (a name or a glob) and time range, all
// in the address so that a filtered view is a deep link; pages back by
// the oldest record's time; each entry opens to its details (request,
// source, error, and the connector's config and state before and after).
// Reading the trail needs the admin role (GET /sluice/audit).
//
// Stable hooks: form#audit-filters with input#audit-connector,
// input#audit-principal, input#audit-operation, input#audit-since,
// input#audit-until, select#audit-limit; button[data-range=1h|24h|7d];
// table#audit-table, tr[data-record=<n>], button[data-test=audit-expand]
// (aria-expanded), tr.fk-detail; button#audit-older, button#audit-newer,
// button#audit-newest; #audit-error, #audit-summary.

import { h, mount, link, when } from '../dom.js';
import * as api from '../api.js';
import { setQuery } from '../router.js';
import { missing, configDiff, diffTable, remount, focusFirst } from '../parts/fleetkit.js';

const FILTERS = ['connector', 'principal', 'operation', 'since', 'until'];

// Families of operations, offered as suggestions (any glob is taken).
const OPERATIONS = ['connector.*', 'connector.create', 'connector.config', 'connector.delete', 'connector.stop', 'connector.pause',
  'connector.resume', 'connector.restart', 'connector.move', 'offsets.*', 'connectors.*', 'maintenance.*', 'rollout.*', 'agent.*',
  'fleet.*', 'task.restart', 'topics.reset', 'logger.level', 'plugin.validate'];

export async function render(ctx) {
  document.title = 'Audit · Sluice';
  const f = Object.fromEntries(FILTERS.map(k => [k, ctx.query.get(k) || '']));
  let limit = Number(ctx.query.get('limit')) || 50;
  let cursor = ctx.query.get('page') || ''; // the page's until: the oldest time of the page before
  const newer = []; // the cursors of the pages before, to go back to
  const opened = new Set(); // the records whose details are open, by key
  let last = null;

  const input = (k, label, props) => h('input', { id: `audit-${k}`, name: k, value: f[k], spellcheck: 'false', autocomplete: 'off', ...props });
  const inputs = {
    connector: input('connector', 'Connector', { placeholder: 'any connector' }),
    principal: input('principal', 'Principal', { placeholder: 'any caller' }),
    operation: input('operation', 'Operation', { placeholder: 'any, or offsets.*', list: 'audit-operations' }),
    since: input('since', 'From', { placeholder: '1h, 7d or 2026-12-01T10:00:00Z', 'aria-describedby': 'audit-time-help' }),
    until: input('until', 'To', { placeholder: 'now', 'aria-describedby': 'audit-time-help' }),
  };
  const limitSel = h('select', { id: 'audit-limit' }, [25, 50, 100, 250].map(n => h('option', { value: n, selected: n === limit }, n)));
  const error = h('p', { id: 'audit-error', class: 'error', role: 'alert', hidden: true });
  const summary = h('p', { id: 'audit-summary', class: 'muted', 'aria-live': 'polite' });
  const tbody = h('tbody');
  const pager = h('div', { class: 'pager' });
  const labelled = (k, label) => h('div', { class: 'field' }, h('label', { for: `audit-${k}` }, label), inputs[k]);
  const form = h('form', { id: 'audit-filters', class: 'fk-filters', role: 'search', 'aria-label': 'Filter the audit trail', on: { submit: e => { e.preventDefault(); apply(); } } },
    labelled('connector', 'Connector'), labelled('principal', 'Principal'), labelled('operation', 'Operation'),
    labelled('since', 'From'), labelled('until', 'To'),
    h('div', { class: 'field' }, h('label', { for: 'audit-limit' }, 'Per page'), limitSel),
    h('div', { class: 'fk-actions' },
      h('button', { type: 'submit', class: 'primary' }, 'Apply'),
      h('button', { type: 'button', on: { click: () => { for (const k of FILTERS) inputs[k].value = ''; apply(); } } }, 'Clear')));

  mount(ctx.root,
    h('div', { class: 'page-head' }, h('h1', {}, 'Audit trail')),
    h('p', { class: 'muted' }, 'Every write through the REST API — the console\'s included — with who sent it, from where, and the connector before and after. Newest first.'),
    form,
    h('datalist', { id: 'audit-operations' }, OPERATIONS.map(o => h('option', { value: o }))),
    h('div', { class: 'toolbar' },
      h('span', { id: 'audit-time-help', class: 'muted small' }, 'Times: a duration back from now (90s, 1h, 7d) or an RFC 3339 time. Quick ranges:'),
      [['1h', 'Last hour'], ['24h', 'Last day'], ['7d', 'Last week']].map(([v, label]) => h('button', { type: 'button', class: 'chip', 'data-range': v,
        'aria-pressed': String(f.since === v && !f.until), on: { click: () => { inputs.since.value = v; inputs.until.value = ''; apply(); } } }, label))),
    error,
    h('table', { class: 'grid fk-audit', id: 'audit-table' },
      h('caption', { class: 'sr-only' }, 'Audit records, newest first'),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Details')),
        ['Time', 'Principal', 'Operation', 'Connector', 'Status', 'Change'].map(c => h('th', { scope: 'col' }, c)))),
      tbody),
    summary, pager);

  function apply() {
    for (const k of FILTERS) f[k] = inputs[k].value.trim();
    limit = Number(limitSel.value) || 50;
    cursor = '';
    newer.length = 0;
    for (const b of ctx.root.querySelectorAll('[data-range]')) b.setAttribute('aria-pressed', String(f.since === b.dataset.range && !f.until));
    refresh();
  }

  async function refresh() {
    setQuery({ ...f, limit: limit === 50 ? '' : limit, page: cursor });
    const q = new URLSearchParams();
    for (const k of FILTERS) if (f[k] && !(k === 'until' && cursor)) q.set(k, f[k]);
    if (cursor) q.set('until', cursor);
    q.set('limit', limit);
    try {
      last = await api.call('GET', `/sluice/audit?${q}`);
      error.hidden = true;
    } catch (e) {
      error.textContent = missing(e, 'an audit trail (GET /sluice/audit)');
      error.hidden = false;
      return;
    }
    draw();
  }

  const keyOf = r => `${r.time}|${r.operation}|${r.path}`;

  function draw() {
    const recs = last.records;
    remount(tbody, JSON.stringify([recs, [...opened]]), () => recs.length ? recs.flatMap((r, i) => row(r, i)) : h('tr', {},
      h('td', { colspan: 7, class: 'empty' }, FILTERS.some(k => f[k]) ? 'No write matches these filters.' : 'No write has been recorded yet.')));
    summary.textContent = `${recs.length} record${recs.length === 1 ? '' : 's'}${cursor ? ', older page' : ''}${last.more ? '; older ones match too' : ''}.` +
      (last.unwritten ? ` Warning: the coordinator that answered could not write ${last.unwritten} audit record(s) since it started; see its log.` : '');
    remount(pager, JSON.stringify([cursor, newer.length, last.more, recs.length]), () => [
      cursor ? h('button', { id: 'audit-newest', type: 'button', on: { click: () => { cursor = ''; newer.length = 0; refresh(); } } }, '« Newest') : null,
      h('button', { id: 'audit-newer', type: 'button', disabled: !cursor, on: { click: () => { cursor = newer.pop() || ''; refresh(); } } }, '‹ Newer'),
      h('button', { id: 'audit-older', type: 'button', disabled: !last.more || !recs.length, on: { click: () => {
        newer.push(cursor);
        cursor = recs[recs.length - 1].time;
        refresh().then(() => focusFirst(document.getElementById('audit-older')));
      } } }, 'Older ›')]);
  }

  function row(r, i) {
    const key = keyOf(r);
    const open = opened.has(key);
    const toggle = h('button', { type: 'button', class: 'link', 'data-test': 'audit-expand', 'aria-expanded': String(open), 'aria-controls': `audit-detail-${i}`,
      'aria-label': `Details of ${r.operation} at ${r.time}`, on: { click: () => { if (opened.has(key)) opened.delete(key); else opened.add(key); draw(); focusFirst(tbody.querySelector(`[aria-controls="audit-detail-${i}"]`)); } } }, open ? '▾' : '▸');
    const out = [h('tr', { 'data-record': i },
      h('td', {}, toggle),
      h('td', {}, when(r.time)),
      h('td', {}, r.principal),
      h('td', { class: 'mono' }, r.operation),
      h('td', {}, r.connector ? link(`/ui/connectors/${api.enc(r.connector)}`, r.connector) : h('span', { class: 'muted' }, '—')),
      h('td', { class: r.status >= 400 ? 'fk-status-bad' : null }, String(r.status), r.error ? h('div', { class: 'reason' }, r.error) : null),
      h('td', {}, change(r)))];
    if (open) out.push(h('tr', { class: 'fk-detail', id: `audit-detail-${i}` }, h('td', { colspan: 7 }, detail(r))));
    return out;
  }

  await ctx.every(3000, async () => { if (!cursor) await refresh(); });
  if (cursor) await refresh();
}

// change says in a few words what a write did to its connector.
function change(r) {
  const b = r.before, a = r.after;
  if (!b && !a) return '—';
  if (!b) return `created ${a.target_state}`;
  if (!a) return 'deleted';
  const parts = [];
  if (b.target_state !== a.target_state) parts.push(`${b.target_state} → ${a.target_state}`);
  const keys = configDiff(b.config, a.config).map(d => (d.from === undefined ? '+' : d.to === undefined ? '−' : '~') + d.key);
  if (keys.length) parts.push(`config ${keys.join(' ')}`);
  return parts.join(', ') || 'unchanged';
}

// detail is a record opened: the request, where it came from, and the
// connector's config and target state before and after.
function detail(r) {
  const b = r.before, a = r.after;
  return h('div', {},
    h('dl', { class: 'kv' },
      h('dt', {}, 'Request'), h('dd', { class: 'mono' }, `${r.method} ${r.path}${r.query ? `?${r.query}` : ''}`),
      h('dt', {}, 'Source'), h('dd', {}, r.source || '—'),
      h('dt', {}, 'Received by'), h('dd', {}, r.coordinator || '—'),
      h('dt', {}, 'Answer'), h('dd', {}, String(r.status), r.error ? ` — ${r.error}` : ''),
      h('dt', {}, 'Target state'), h('dd', {}, `${b ? b.target_state : '(none)'} → ${a ? a.target_state : '(none)'}`)),
    r.configs_omitted ? h('p', { class: 'muted' }, 'The configs were left out of this record: with them it would not fit one Kafka record.') : null,
    b || a ? h('div', {}, h('h3', {}, 'Config before and after'), diffTable(configDiff(b && b.config, a && a.config), 'Config before and after the write')) : null);
}
