// The overview tab of a connector's page: its state, plugin and worker,
// its tasks (agent, trace, restart), its last restart, a sink's lag per
// partition with the last hour as a sparkline, and the gauges its tasks
// report (a CDC snapshot's progress, a replication slot's lag). Live: it
// follows the page's status reads and reads lag and gauges as it goes.
//
// Stable hooks: #ov-summary, #ov-tasks (table; rows [data-task=<id>],
// buttons [data-action=restart-task]), #ov-last-restart, #ov-lag (table;
// rows [data-partition="<topic>/<n>"]), #ov-lag-note, #ov-gauges.

import { h, mount, badge, num, when, ago, link } from '../dom.js';
import * as api from '../api.js';
import { sparkline } from './spark.js';

/** renderOverview fills el with the overview of info's connector. */
export async function renderOverview(el, ctx, info) {
  const name = info.name;
  const path = `/connectors/${api.enc(name)}`;
  const op = api.can('operator', name);
  const summary = h('dl', { class: 'facts card', id: 'ov-summary', 'aria-label': 'Connector' });
  const lastRestart = h('span', { id: 'ov-last-restart' }, '…');
  const tasksBody = h('tbody');
  const taskSaid = h('p', { class: 'muted small', role: 'status', 'aria-live': 'polite', tabindex: '-1' });
  const lagBox = h('section', { class: 'ov-lag', 'aria-labelledby': 'ov-lag-h', hidden: info.type !== 'sink' });
  const gaugeBox = h('section', { class: 'ov-gauges', id: 'ov-gauges', 'aria-labelledby': 'ov-gauges-h', hidden: true });
  const openTraces = new Set(); // tasks whose trace the user opened

  mount(el,
    summary,
    h('section', { 'aria-labelledby': 'ov-tasks-h' },
      h('h2', { id: 'ov-tasks-h' }, 'Tasks'),
      h('table', { class: 'grid', id: 'ov-tasks' },
        h('caption', { class: 'sr-only' }, `Tasks of ${name}`),
        h('thead', {}, h('tr', {}, ['Task', 'State', 'Agent', 'Version', 'Trace', ''].map((c, i) =>
          h('th', { scope: 'col' }, i === 5 ? h('span', { class: 'sr-only' }, 'Actions') : c)))),
        tasksBody),
      taskSaid),
    lagBox, gaugeBox);

  let drawn = '';
  function drawStatus(st) {
    // Drawn again only when it changed: a button the user is on keeps focus.
    const sig = JSON.stringify(st);
    if (sig === drawn) return;
    drawn = sig;
    const c = st.connector;
    const running = st.tasks.filter(t => t.state === 'RUNNING').length;
    const fact = (label, ...value) => h('div', { class: 'fact' }, h('dt', {}, label), h('dd', {}, ...value));
    const twice = (label, ...value) => h('div', { class: 'fact two' }, h('dt', {}, label), h('dd', {}, ...value));
    mount(summary,
      fact('State', badge(c.state)),
      fact('Type', st.type || info.type),
      fact('Class', h('code', { title: info.config['connector.class'] || '' }, shortClass(info.config['connector.class']))),
      fact('Plugin version', c.version || info.config['connector.plugin.version'] || '—'),
      fact('Worker', c.worker_id || '—'),
      fact('Tasks running', `${running} of ${st.tasks.length}`),
      twice('Last restart', lastRestart),
      c.trace ? h('div', { class: 'fact wide' }, h('dt', {}, 'Connector trace'), h('dd', {}, h('details', { class: 'trace' }, h('summary', {}, firstLine(c.trace)), h('pre', {}, c.trace)))) : null);
    mount(tasksBody, st.tasks.length ? st.tasks.map(taskRow) : h('tr', {}, h('td', { colspan: 6, class: 'empty' },
      c.state === 'STOPPED' ? 'Stopped: it has no tasks until it is resumed.' : 'No task yet.')));
  }

  function taskRow(t) {
    const trace = t.trace ? h('details', { class: 'trace', open: openTraces.has(t.id) },
      h('summary', {}, firstLine(t.trace)), h('pre', {}, t.trace)) : h('span', { class: 'muted' }, '—');
    if (t.trace) trace.addEventListener('toggle', () => { if (trace.open) openTraces.add(t.id); else openTraces.delete(t.id); });
    return h('tr', { 'data-task': t.id },
      h('td', {}, String(t.id)),
      h('td', {}, badge(t.state)),
      h('td', {}, t.worker_id ? link(`/ui/agents/${api.enc(t.worker_id)}`, t.worker_id) : h('span', { class: 'muted' }, 'unassigned')),
      h('td', {}, t.version || '—'),
      h('td', { class: 'trace-cell' }, trace),
      h('td', {}, op ? h('button', { type: 'button', 'data-action': 'restart-task', 'aria-label': `Restart task ${t.id}`, on: { click: () => restartTask(t.id) } }, 'Restart') : null));
  }

  async function restartTask(id) {
    taskSaid.textContent = `Restarting task ${id}…`;
    try {
      await api.call('POST', `${path}/tasks/${id}/restart`);
      taskSaid.textContent = `Restart asked for task ${id}.`;
      findRestart();
    } catch (e) {
      taskSaid.textContent = '';
      taskSaid.append(h('span', { class: 'error' }, `Restart of task ${id} failed: ${e.message}`));
    }
    const again = tasksBody.querySelector(`tr[data-task="${id}"] button`);
    (again || taskSaid).focus();
  }

  // findRestart reads the last successful restart from the audit trail,
  // which only an admin of the connector may read.
  async function findRestart() {
    if (!api.can('admin', name)) {
      mount(lastRestart, h('span', { class: 'muted' }, 'in the audit trail (admins)'));
      return;
    }
    try {
      const log = await api.call('GET', `/sluice/audit?connector=${api.enc(name)}&since=30d&limit=1000`);
      const r = log.records.find(x => (x.operation === 'connector.restart' || x.operation === 'task.restart') && x.status < 300);
      if (!ctx.live()) return;
      if (!r) { mount(lastRestart, h('span', { class: 'muted' }, log.more ? 'none among the last 1,000 writes' : 'none in the last 30 days')); return; }
      const what = r.operation === 'task.restart' ? `task ${(r.path.match(/\/tasks\/(\d+)\//) || [])[1] ?? '?'}` : `connector${/includeTasks=true/.test(r.query || '') ? ' and tasks' : ''}`;
      mount(lastRestart, `${ago(r.time)} — ${what}, by ${r.principal} `, h('span', { class: 'muted small' }, '(', when(r.time), ')'));
    } catch (e) {
      mount(lastRestart, h('span', { class: 'muted' }, `unknown: ${e.message}`));
    }
  }

  let history = null; // the last lag history answer
  let historyAt = 0;
  let lagMissing = '';

  async function readLag() {
    const lag = await api.call('GET', `/sluice/connectors/${api.enc(name)}/lag`).catch(e => ({ error: e }));
    const now = Date.now();
    const every = interval(history) ? Math.max(interval(history), 5) * 1000 : 10000;
    if (!lagMissing && now - historyAt >= every) {
      historyAt = now;
      try {
        history = await api.call('GET', `/sluice/connectors/${api.enc(name)}/lag/history`);
      } catch (e) {
        history = null;
        lagMissing = e.status === 404 && !/^Connector /.test(e.message) ? 'This coordinator does not have lag history (GET …/lag/history answered 404): the sparklines need a newer Sluice.' : '';
        if (e.status !== 404) historyAt = now - every + 5000; // try again soon
      }
    }
    if (ctx.live()) drawLag(lag);
  }

  function drawLag(lag) {
    if (lag.error) {
      mount(lagBox, h('h2', { id: 'ov-lag-h' }, 'Sink lag'), h('p', { class: 'error' }, `The lag could not be read: ${lag.error.message}`));
      return;
    }
    const series = new Map();
    for (const p of (history && history.partitions) || []) series.set(`${p.topic}/${p.partition}`, p.samples || []);
    const note = lagMissing || (history && history.note) || (history && history.since
      ? `Sampled every ${interval(history) || '?'} s by the leader since ${new Date(history.since).toLocaleTimeString()}; a failover starts it anew.` : '');
    mount(lagBox,
      h('h2', { id: 'ov-lag-h' }, 'Sink lag ', h('span', { class: 'muted small' }, `total ${num(lag.total_lag)}`)),
      h('table', { class: 'grid', id: 'ov-lag' },
        h('caption', { class: 'sr-only' }, 'Consumer lag per partition, now and over the last hour'),
        h('thead', {}, h('tr', {},
          h('th', { scope: 'col' }, 'Topic'), h('th', { scope: 'col', class: 'num' }, 'Partition'),
          h('th', { scope: 'col', class: 'num' }, 'End offset'), h('th', { scope: 'col', class: 'num' }, 'Committed'),
          h('th', { scope: 'col', class: 'num' }, 'Lag'), h('th', { scope: 'col' }, 'Last hour'))),
        h('tbody', {}, lag.partitions.length ? lag.partitions.map(p => {
          const key = `${p.topic}/${p.partition}`;
          return h('tr', { 'data-partition': key },
            h('td', {}, p.topic), h('td', { class: 'num' }, String(p.partition)),
            h('td', { class: 'num' }, num(p.end_offset)),
            h('td', { class: 'num' }, p.committed_offset < 0 ? h('span', { class: 'muted', title: 'the group committed nothing' }, 'none') : num(p.committed_offset)),
            h('td', { class: 'num' }, num(p.lag)),
            h('td', {}, lagMissing ? h('span', { class: 'muted' }, '—') : h('div', { class: 'spark-cell' },
              sparkline(series.get(key), { label: `Lag of ${key} over the last hour`, width: 200, height: 30 }),
              peak(series.get(key)))));
        }) : h('tr', {}, h('td', { colspan: 6, class: 'empty' }, 'No partition assigned yet.')))),
      note ? h('p', { class: 'muted small', id: 'ov-lag-note' }, note) : null);
  }

  async function readGauges() {
    let g;
    try {
      g = await api.call('GET', `/sluice/connectors/${api.enc(name)}/gauges`);
    } catch (e) {
      return; // gauges are extra: the status above says what matters
    }
    if (!ctx.live()) return;
    const rows = [];
    for (const t of g.tasks || []) for (const x of t.gauges || []) rows.push({ task: t.id, ...x });
    gaugeBox.hidden = !rows.length;
    if (!rows.length) return;
    mount(gaugeBox, h('h2', { id: 'ov-gauges-h' }, 'Gauges'),
      snapshots(rows),
      h('table', { class: 'grid' },
        h('caption', { class: 'sr-only' }, 'Gauges the tasks report'),
        h('thead', {}, h('tr', {}, h('th', { scope: 'col', class: 'num' }, 'Task'), h('th', { scope: 'col' }, 'Gauge'),
          h('th', { scope: 'col' }, 'Labels'), h('th', { scope: 'col', class: 'num' }, 'Value'))),
        h('tbody', {}, rows.map(r => h('tr', {},
          h('td', { class: 'num' }, String(r.task)),
          h('td', { title: r.help || '' }, h('code', {}, r.name), r.help ? h('div', { class: 'muted small' }, r.help) : null),
          h('td', {}, Object.entries(r.labels || {}).map(([k, v]) => h('span', { class: 'label' }, `${k}=${v}`))),
          h('td', { class: 'num' }, gaugeValue(r)))))));
  }

  if (info.status) drawStatus(info.status);
  const off = info.onStatus(drawStatus);
  ctx.onLeave(off);
  findRestart();
  let tick = 0;
  ctx.every(2000, async () => {
    const jobs = [];
    if (info.type === 'sink') jobs.push(readLag());
    if (tick++ % 3 === 0) jobs.push(readGauges());
    if (tick % 15 === 0) jobs.push(findRestart());
    await Promise.all(jobs);
  });
}

// snapshots shows a CDC snapshot's progress per task and table, from the
// chunks read of the chunks planned.
function snapshots(rows) {
  const by = new Map();
  for (const r of rows) {
    const m = /snapshot_chunks(_done)?$/.exec(r.name);
    if (!m || !r.labels || !r.labels.table) continue;
    const k = `${r.task}\u0000${r.labels.table}`;
    const e = by.get(k) || { task: r.task, table: r.labels.table, done: 0, total: 0 };
    if (m[1]) e.done = r.value; else e.total = r.value;
    by.set(k, e);
  }
  const list = [...by.values()].filter(e => e.total > 0);
  if (!list.length) return null;
  return h('div', { class: 'snapshots', 'aria-label': 'Snapshot progress', role: 'group' }, list.map(e => {
    const pct = Math.min(100, Math.round(100 * e.done / e.total));
    const id = `snap-${e.task}-${e.table.replace(/[^A-Za-z0-9_-]/g, '_')}`;
    return h('div', { class: 'snap' },
      h('label', { for: id }, `Snapshot of ${e.table} (task ${e.task})`),
      h('progress', { id, max: e.total, value: e.done }, `${pct} %`),
      h('span', { class: 'muted small' }, `${pct} % — ${num(e.done)} of ${num(e.total)} chunks`));
  }));
}

// peak words a series' highest value beside its sparkline.
function peak(samples) {
  if (!samples || !samples.length) return null;
  return h('span', { class: 'muted small', 'aria-hidden': 'true' }, `peak ${num(Math.max(...samples.map(x => Number(x[1]))))}`);
}

// interval is a lag history's sampling interval in seconds (the answer
// gives it in milliseconds).
function interval(hist) {
  if (!hist) return 0;
  if (hist.interval_ms) return hist.interval_ms / 1000;
  return hist.interval_seconds || 0;
}

function shortClass(cls) {
  if (!cls) return '—';
  const i = cls.lastIndexOf('.');
  return i < 0 ? cls : cls.slice(i + 1);
}

function firstLine(trace) {
  const line = trace.split('\n')[0];
  return line.length > 90 ? `${line.slice(0, 90)}…` : line;
}

function gaugeValue(r) {
  if (/ratio|progress/.test(r.name) && r.value >= 0 && r.value <= 1) return `${(r.value * 100).toFixed(1)} %`;
  if (/bytes/.test(r.name)) return bytes(r.value);
  return num(r.value);
}

function bytes(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${i ? v.toFixed(1) : v} ${units[i]}`;
}
