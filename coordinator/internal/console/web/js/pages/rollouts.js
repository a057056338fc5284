// Health-gated config rollouts: the list (/ui/rollouts), a new one
// (/ui/rollouts/new, parts/rolloutform.js) and one rollout live
// (/ui/rollouts/{id}): each batch passing its health gate, each
// connector's state and diff, why it paused or failed, and pause, resume,
// abort for an operator of every connector it holds.
//
// Stable hooks: table#rollouts-table, tr[data-rollout=<id>], a#rollout-new,
// [data-test=rollout-state], #rollout-why, button[data-test=rollout-pause|
// rollout-resume|rollout-abort], #rollout-outcome, section.fk-batch
// [data-batch=<n>] with [data-test=batch-state], progress.batch-progress,
// tr[data-connector=<name>].

import { h, mount, link, badge, ago, when } from '../dom.js';
import * as api from '../api.js';
import { go } from '../router.js';
import { confirm } from '../parts/modal.js';
import { outcome, bar, missing, pageError, plural, focusFirst, remount, configDiff, diffTable, roughAgo } from '../parts/fleetkit.js';
import { rolloutForm } from '../parts/rolloutform.js';

const ENDED = ['done', 'rolled_back', 'aborted'];

export async function render(ctx) {
  if (ctx.params.id === 'new') return renderNew(ctx);
  if (ctx.params.id) return renderOne(ctx, ctx.params.id);
  return renderList(ctx);
}

// connectorsOf are the names a rollout holds, in batch order.
const connectorsOf = r => r.batches.flatMap(b => b.connectors.map(c => c.name));

// applied counts the connectors of a batch (or every batch) the rollout wrote.
const applied = cs => cs.filter(c => c.state === 'applied').length;

function selectorWords(req) {
  return req.match ? `match ${req.match}` : `${plural((req.names || []).length, 'name')}: ${(req.names || []).slice(0, 3).join(', ')}${(req.names || []).length > 3 ? ', …' : ''}`;
}

function patchWords(patch) {
  return Object.entries(patch || {}).map(([k, v]) => v === null ? `−${k}` : `${k}=${v}`).join(', ');
}

async function renderList(ctx) {
  document.title = 'Rollouts · Sluice';
  const tbody = h('tbody');
  const failure = h('p', { class: 'error', role: 'alert', hidden: true });
  mount(ctx.root,
    h('div', { class: 'page-head' }, h('h1', {}, 'Config rollouts'),
      api.can('operator') ? link('/ui/rollouts/new', 'New rollout', { class: 'button primary', id: 'rollout-new' }) : null),
    h('p', { class: 'muted' }, 'A rollout patches many connectors\' configs batch by batch, and holds each batch to a health gate before the next.'),
    failure,
    h('table', { class: 'grid', id: 'rollouts-table' },
      h('caption', { class: 'sr-only' }, 'Rollouts, newest first'),
      h('thead', {}, h('tr', {}, ['Rollout', 'State', 'Connectors', 'Patch', 'Batches', 'By', 'Created'].map(c => h('th', { scope: 'col' }, c)))),
      tbody));
  await ctx.every(2000, async () => {
    let list;
    try {
      list = ((await api.call('GET', '/sluice/rollouts')).rollouts || []).slice().reverse();
      failure.hidden = true;
    } catch (e) {
      failure.textContent = missing(e, 'config rollouts (GET /sluice/rollouts)');
      failure.hidden = false;
      return;
    }
    remount(tbody, JSON.stringify(list.map(r => [r.id, r.state, r.batch, r.error, r.batches.map(b => [b.state, applied(b.connectors)]), roughAgo(r.created_at)])), () =>
      list.length ? list.map(r => {
        const names = connectorsOf(r);
        const done = r.batches.filter(b => b.state === 'done').length;
        return h('tr', { 'data-rollout': r.id },
          h('th', { scope: 'row' }, link(`/ui/rollouts/${api.enc(r.id)}`, r.id, { class: 'name' })),
          h('td', {}, badge(r.state), r.error ? h('div', { class: 'reason' }, r.error) : null),
          h('td', {}, `${applied(r.batches.flatMap(b => b.connectors))} of ${names.length} applied`, h('div', { class: 'muted small' }, selectorWords(r.request))),
          h('td', { class: 'mono small' }, patchWords(r.request.patch)),
          h('td', {}, bar(done, r.batches.length, `${done}/${r.batches.length}`, `Batches of ${r.id} done`)),
          h('td', {}, r.principal || '—'),
          h('td', { title: r.created_at }, roughAgo(r.created_at)));
      }) : h('tr', {}, h('td', { colspan: 7, class: 'empty' }, 'No rollout yet.')));
  });
}

async function renderNew(ctx) {
  document.title = 'New rollout · Sluice';
  const box = h('div');
  mount(ctx.root, h('p', {}, link('/ui/rollouts', '‹ All rollouts')), h('h1', {}, 'New config rollout'), box);
  if (!api.can('operator')) {
    mount(box, h('p', { class: 'error' }, 'Starting a rollout needs the operator role over every connector it matches.'));
    return;
  }
  rolloutForm(box, r => { window.scrollTo(0, 0); go(`/ui/rollouts/${api.enc(r.id)}`); });
}

// seconds reads a Go duration such as 30s, 2m or 1m30s (h, m, s, ms);
// NaN when it is none.
function seconds(d) {
  const parts = String(d).match(/^((\d+(\.\d+)?)(h|ms|m|s))+$/) ? String(d).match(/\d+(\.\d+)?(h|ms|m|s)/g) : null;
  if (!parts) return NaN;
  const unit = { h: 3600, m: 60, s: 1, ms: 0.001 };
  return parts.reduce((n, p) => n + parseFloat(p) * unit[p.replace(/^[\d.]+/, '')], 0);
}

// gate shows where a verifying batch stands against the health gate: how
// long it has been healthy of how long the gate asks, or what it waits for.
function gate(r, b, i) {
  if (b.state !== 'verifying') return null;
  const g = r.request.health || {};
  const need = g.running_for || '30s';
  const since = `verifying since ${ago(b.verifying_since)}`;
  if (!b.healthy_since) {
    return h('p', { class: 'fk-gate' }, `Waiting for its connectors and their new tasks to be RUNNING (${since}; the gate asks ${need} healthy, at most ${g.max_failed_tasks || 0} task(s) FAILED).`);
  }
  const healthy = Math.max(0, Math.floor((Date.now() - new Date(b.healthy_since).getTime()) / 1000));
  const total = seconds(need);
  return h('div', { class: 'fk-gate' },
    isFinite(total) ? bar(Math.min(healthy, total), total, `healthy for ${healthy} s of the ${need} asked`, `Health gate of batch ${i + 1}`)
      : h('p', {}, `healthy for ${healthy} s of the ${need} asked`),
    h('span', {}, `(${since})`));
}

// batchSection draws batch i; open holds the connectors whose diff the
// user opened, so that a redraw keeps them open.
function batchSection(r, b, i, open, now) {
  const n = b.connectors.length;
  const done = applied(b.connectors);
  const current = i === r.batch && !ENDED.includes(r.state);
  return h('section', { class: ['fk-batch', `b-state-${b.state}`], 'data-batch': i, 'aria-labelledby': `batch-${i}-h` },
    h('h3', { id: `batch-${i}-h` }, `Batch ${i + 1} of ${r.batches.length}`, badge(b.state), h('span', { class: 'sr-only', 'data-test': 'batch-state' }, b.state),
      current ? h('span', { class: 'muted small' }, b.state === 'failed' ? 'the rollout stopped here' : 'in progress') : null),
    bar(done, n, `${done} of ${plural(n, 'connector')} applied`, `Batch ${i + 1} progress`),
    gate(r, b, i),
    h('table', { class: 'grid' },
      h('caption', { class: 'sr-only' }, `Connectors of batch ${i + 1}`),
      h('thead', {}, h('tr', {}, ['Connector', 'Rollout step', 'Held to the gate', 'Running now', 'Change'].map(c => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, b.connectors.map(c => {
        const rows = configDiff(c.before, c.after);
        const failed = c.state.startsWith('failed');
        return h('tr', { 'data-connector': c.name },
          h('th', { scope: 'row' }, link(`/ui/connectors/${api.enc(c.name)}`, c.name)),
          h('td', {}, badge(failed ? 'failed' : c.state), failed ? h('div', { class: 'reason' }, c.state.replace(/^failed:\s*/, '')) : null),
          h('td', {}, b.state === 'pending' ? h('span', { class: 'muted' }, 'decided as its batch starts') : c.was_running ? h('span', { title: 'It was RUNNING as its batch started' }, 'yes') : h('span', { title: 'It was not RUNNING as its batch started' }, 'no')),
          h('td', {}, health(now[c.name])),
          h('td', {}, h('details', { open: open.has(c.name), on: { toggle: e => { if (e.target.open) open.add(c.name); else open.delete(c.name); } } },
            h('summary', {}, plural(rows.length, 'key')), diffTable(rows, `Config change of ${c.name}`))));
      }))));
}

// health shows a connector's status now: its state, and its failed
// tasks with the first line of their trace (what made a batch fail).
function health(st) {
  if (!st) return h('span', { class: 'muted' }, '—');
  const failed = (st.tasks || []).filter(t => t.state === 'FAILED');
  const running = (st.tasks || []).filter(t => t.state === 'RUNNING').length;
  return h('div', {}, badge(st.connector.state), ` ${running}/${(st.tasks || []).length} tasks running`,
    failed.map(t => h('div', { class: 'reason', title: t.trace || '' }, `task ${t.id} FAILED: ${(t.trace || '').split('\n')[0]}`)));
}

async function renderOne(ctx, id) {
  document.title = `Rollout ${id} · Sluice`;
  const path = `/sluice/rollouts/${api.enc(id)}`;
  let r;
  try {
    r = await api.call('GET', path);
  } catch (e) {
    pageError(ctx.root, `Rollout ${id}`, missing(e, 'config rollouts (GET /sluice/rollouts/{id})'));
    return;
  }
  const say = outcome('rollout-outcome');
  const head = h('div', { class: 'page-head' }, h('h1', {}, `Rollout ${id}`), h('div', { class: 'actions' }));
  const why = h('div', { id: 'rollout-why', 'aria-live': 'polite' });
  const facts = h('dl', { class: 'kv fk-kv2' });
  const batches = h('div');
  const openDiffs = new Set();
  let now = {}; // the rollout's connectors' statuses, by name
  mount(ctx.root, h('p', {}, link('/ui/rollouts', '‹ All rollouts')), head, say.el, why,
    h('div', { class: 'card' }, facts), h('h2', {}, 'Batches'), batches);

  // Pause, resume and abort need the operator role over every connector
  // the rollout holds (the server checks again).
  const mayAct = () => connectorsOf(r).every(n => api.can('operator', n));
  async function act(verb) {
    const words = { pause: 'Pause', resume: 'Resume', abort: 'Abort' }[verb];
    if (verb === 'abort' && !await confirm(`Abort rollout ${id}?`, h('p', {},
      'It stops at once and for good. What it applied stays applied; nothing is rolled back. Its connectors are free for another rollout.'), 'Abort the rollout', 'danger')) return;
    try {
      r = await api.call('PUT', `${path}/${verb}`);
      say.ok(`${words}: the rollout is ${r.state.replace('_', ' ')}.`);
    } catch (e) {
      say.fail(`${words}: ${e.message}`);
    }
    focusFirst(say.el);
    draw();
  }

  function draw() {
    const ended = ENDED.includes(r.state);
    remount(head.querySelector('.actions'), JSON.stringify([r.state]), () => mayAct() && !ended ? [
      h('span', { 'data-test': 'rollout-state' }, badge(r.state)),
      r.state === 'running' ? h('button', { type: 'button', 'data-test': 'rollout-pause', on: { click: () => act('pause') } }, 'Pause') : null,
      r.state === 'paused' ? h('button', { type: 'button', 'data-test': 'rollout-resume', on: { click: () => act('resume') } }, 'Resume') : null,
      r.state !== 'failed' ? h('button', { type: 'button', class: 'danger', 'data-test': 'rollout-abort', on: { click: () => act('abort') } }, 'Abort…') : null,
    ] : h('span', { 'data-test': 'rollout-state' }, badge(r.state)));
    remount(why, JSON.stringify([r.state, r.error]), () => r.error ? h('div', { class: 'fk-why', role: 'alert' },
      h('strong', {}, r.state === 'paused' ? 'Why it paused: ' : r.state === 'failed' ? 'Why it failed (rolling back): ' : 'Why it stopped: '), r.error,
      r.state === 'paused' ? h('p', {}, 'Fix the cause (or accept it) and resume: the failed batch is verified again from the start.') : null) : null);
    const req = r.request;
    const total = connectorsOf(r).length;
    remount(facts, JSON.stringify([r.state, r.batch, r.updated_at]), () => [
      h('dt', {}, 'State'), h('dd', {}, badge(r.state), ` batch ${Math.min(r.batch + 1, r.batches.length)} of ${r.batches.length}; ${applied(r.batches.flatMap(b => b.connectors))} of ${plural(total, 'connector')} applied`),
      h('dt', {}, 'Connectors'), h('dd', {}, selectorWords(req)),
      h('dt', {}, 'Patch'), h('dd', {}, h('code', {}, JSON.stringify(req.patch))),
      h('dt', {}, 'Batches asked'), h('dd', {}, req.batches && req.batches.length ? req.batches.join(', ') : 'one batch'),
      h('dt', {}, 'Health gate'), h('dd', {}, `RUNNING for ${(req.health || {}).running_for || '30s'}, at most ${(req.health || {}).max_failed_tasks || 0} task(s) FAILED`),
      h('dt', {}, 'On failure'), h('dd', {}, req.on_failure === 'rollback' ? 'roll back every applied batch' : 'pause'),
      h('dt', {}, 'Started'), h('dd', {}, when(r.created_at), ` by ${r.principal || 'anonymous'}`),
      h('dt', {}, 'Last step'), h('dd', {}, when(r.updated_at)),
    ]);
    // A verifying batch's gate counts seconds: it is drawn at each poll.
    const ticking = r.batches.some(b => b.state === 'verifying') ? Date.now() : 0;
    remount(batches, JSON.stringify([r.batch, r.batches, ticking, now]),
      () => r.batches.map((b, i) => batchSection(r, b, i, openDiffs, now)));
  }
  // statuses reads the rollout's connectors' statuses (the page shows
  // whether each runs, and why a task failed).
  async function statuses() {
    const all = await api.call('GET', '/connectors?expand=status');
    const mine = new Set(connectorsOf(r));
    now = Object.fromEntries(Object.entries(all).filter(([n]) => mine.has(n)).map(([n, v]) => [n, v.status]));
  }
  draw();
  // Every connector's status is one read of the whole fleet: it is read
  // every 1.5 s while the rollout moves, every 15 s once it ended.
  let tick = 0;
  await ctx.every(1500, async () => {
    if (!ENDED.includes(r.state) || tick++ % 10 === 0) {
      try { await statuses(); } catch { /* the table keeps its last view */ }
    }
    if (!ENDED.includes(r.state)) r = await api.call('GET', path);
    draw();
  });
}
