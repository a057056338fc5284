// Agents: every agent with its state, heartbeat, labels and tasks
// (/ui/agents), one agent with its tasks, plugins and a drain's progress
// (/ui/agents/{id}); cordon, uncordon and drain (admin), the rebalance
// panel and the rolling restarts of agents.
//
// Stable hooks for browser tests:
//   table#agents-table, tr[data-agent=<id>]           the list
//   button[data-test=cordon|uncordon|drain]           per agent (admin)
//   #agent-outcome                                    the result of an action
//   section#drain, [data-test=drain-state], progress#drain-progress
//   [data-test=drain-remaining] li, [data-test=drain-blocked] li
//   table#agent-tasks, table#agent-plugins            an agent's page
//   section#rebalance, section#rolls                  the panels (parts/)

import { h, mount, link, badge, num, when } from '../dom.js';
import * as api from '../api.js';
import { confirm } from '../parts/modal.js';
import { outcome, bar, missing, pageError, plural, remount, roughAgo } from '../parts/fleetkit.js';
import { rebalancePanel } from '../parts/rebalance.js';
import { rollsPanel } from '../parts/agentrolls.js';

export async function render(ctx) {
  if (ctx.params.id) return renderAgent(ctx, ctx.params.id);
  return renderList(ctx);
}

// cordonWords says who took an agent out of service, and since when.
function cordonWords(a) {
  if (!a.cordon) return null;
  const who = a.cordon.origin === 'operator' && a.cordon.principal ? `operator (${a.cordon.principal})` : a.cordon.origin;
  return `by ${who}, ${roughAgo(a.cordon.since)}`;
}

// heartbeat says whether the agent heartbeats, and until when its lease runs.
function heartbeat(a) {
  if (!a.registered) return h('span', { class: 'fk-away', title: 'Known from the fleet or status topic only: away, or expected back within its lease' }, 'not registered');
  return h('span', { title: `Its lease runs until ${a.lease_expires}: the leader counts it lost if it stops heartbeating by then` }, 'heartbeating');
}

// actions are the admin's buttons for one agent; done(message) is called
// after each action went through, fail(message) when it did not.
function actions(a, { done, fail, after }) {
  if (!api.can('admin')) return null;
  const put = async (btn, what, path, word) => {
    btn.disabled = true;
    try {
      await api.call('PUT', path);
      done(`${a.id}: ${word}.`);
      await after();
    } catch (e) {
      fail(`${what} ${a.id}: ${e.message}`);
      btn.disabled = false;
    }
  };
  const base = `/sluice/agents/${api.enc(a.id)}`;
  const out = [];
  if (a.state === 'active') {
    out.push(h('button', { type: 'button', 'data-test': 'cordon', 'aria-label': `Cordon ${a.id}`,
      on: { click: e => put(e.currentTarget, 'Cordon', `${base}/cordon`, 'cordoned: it takes no new task and keeps those it runs') } }, 'Cordon'));
  } else {
    out.push(h('button', { type: 'button', 'data-test': 'uncordon', 'aria-label': `Uncordon ${a.id}`,
      on: { click: e => put(e.currentTarget, 'Uncordon', `${base}/uncordon`, 'uncordoned: it takes new tasks again') } }, 'Uncordon'));
  }
  if (a.state !== 'draining') {
    out.push(h('button', { type: 'button', 'data-test': 'drain', 'aria-label': `Drain ${a.id}`,
      on: { click: e => drain(a, e.currentTarget, { done, fail, after }) } }, 'Drain…'));
  }
  return h('div', { class: 'fk-actions' }, out);
}

// drain confirms, then drains the agent; a drain that would leave tasks
// nowhere to go is refused (409) and offered again with force.
async function drain(a, btn, { done, fail, after }) {
  const n = (a.tasks || []).length;
  if (!await confirm(`Drain ${a.id}?`, h('div', {},
    h('p', {}, `${a.id} takes no new task, and its ${plural(n, 'task')} move to other agents two at a time: each is stopped, its stop confirmed, fenced and started elsewhere from its committed offsets.`),
    h('p', {}, 'It stays draining until you uncordon it.')), `Drain ${a.id}`)) return;
  const path = `/sluice/agents/${api.enc(a.id)}/drain`;
  btn.disabled = true;
  try {
    await api.call('PUT', path);
  } catch (e) {
    if (e.status !== 409 || !/force=true/.test(e.message)) { fail(`Drain ${a.id}: ${e.message}`); btn.disabled = false; return; }
    const force = await confirm(`Some tasks of ${a.id} have nowhere to go`, h('div', {},
      h('p', { class: 'error' }, e.message),
      h('p', {}, 'A forced drain goes on, and leaves those tasks UNASSIGNED until an agent that may run them is there.')),
    'Drain anyway (force)', 'danger');
    if (!force) { fail(`Drain ${a.id}: not started. ${e.message}`); btn.disabled = false; return; }
    try { await api.call('PUT', `${path}?force=true`); } catch (e2) { fail(`Drain ${a.id}: ${e2.message}`); btn.disabled = false; return; }
  }
  done(`${a.id}: draining; its tasks are moving.`);
  await after();
}

async function renderList(ctx) {
  document.title = 'Agents · Sluice';
  const say = outcome('agent-outcome');
  const tbody = h('tbody');
  const summary = h('p', { class: 'muted', 'aria-live': 'polite' });
  const failure = h('p', { class: 'error', role: 'alert', hidden: true });
  const admin = api.can('admin');
  const heading = h('h1', {}, 'Agents');
  mount(ctx.root,
    h('div', { class: 'page-head' }, heading),
    h('p', { class: 'muted' }, 'Agents run the tasks. A cordoned agent keeps its tasks and takes no new one; a draining one hands its tasks over, a few at a time.'),
    say.el, failure,
    h('table', { class: 'grid', id: 'agents-table' },
      h('caption', { class: 'sr-only' }, 'Agents, their state, heartbeat and tasks'),
      h('thead', {}, h('tr', {}, ['Agent', 'State', 'Heartbeat', 'Started', 'Version', 'Labels', 'Tasks', admin ? 'Actions' : null]
        .filter(Boolean).map(c => h('th', { scope: 'col', class: c === 'Tasks' ? 'num' : null }, c)))),
      tbody),
    summary);
  const rebalance = rebalancePanel(ctx);
  const rolls = rollsPanel(ctx);
  ctx.root.append(rebalance.el, rolls.el);

  let agents = [];
  const ops = say.handlers(() => refresh());
  async function refresh() {
    try {
      agents = (await api.call('GET', '/sluice/agents')).agents || [];
      failure.hidden = true;
    } catch (e) {
      failure.textContent = missing(e, 'the agents endpoint (GET /sluice/agents)');
      failure.hidden = false;
      return;
    }
    // What the rows show, without the lease that moves with every heartbeat.
    const key = JSON.stringify(agents.map(a => ({ ...a, lease_expires: undefined, age: roughAgo(a.started_at), by: cordonWords(a) })));
    remount(tbody, key, () => agents.length ? agents.map(a => h('tr', { 'data-agent': a.id },
      h('th', { scope: 'row' }, link(`/ui/agents/${api.enc(a.id)}`, a.id, { class: 'name' })),
      h('td', {}, badge(a.state), a.cordon ? h('div', { class: 'reason' }, cordonWords(a)) : null),
      h('td', {}, heartbeat(a)),
      h('td', { title: a.started_at || '' }, roughAgo(a.started_at)),
      h('td', {}, a.version || '—'),
      h('td', {}, labelList(a.labels)),
      h('td', { class: 'num' }, num((a.tasks || []).length)),
      admin ? h('td', {}, actions(a, ops)) : null))
      : h('tr', {}, h('td', { colspan: admin ? 8 : 7, class: 'empty' }, 'No agent is registered or known.')));
    const by = s => agents.filter(a => a.state === s).length;
    summary.textContent = `${plural(agents.length, 'agent')}: ${by('active')} active, ${by('cordoned')} cordoned, ${by('draining')} draining; ${num(agents.reduce((n, a) => n + (a.tasks || []).length, 0))} tasks.`;
    rebalance.agents(agents);
    rolls.agents(agents);
  }
  await Promise.all([ctx.every(2000, refresh), rebalance.start(), rolls.start()]);
}

function labelList(labels) {
  const e = Object.entries(labels || {});
  return e.length ? h('div', { class: 'labels' }, e.map(([k, v]) => h('span', { class: 'label' }, `${k}=${v}`))) : h('span', { class: 'muted' }, '—');
}

async function renderAgent(ctx, id) {
  document.title = `${id} · Agents · Sluice`;
  const base = `/sluice/agents/${api.enc(id)}`;
  let a;
  try {
    a = await api.call('GET', base);
  } catch (e) {
    pageError(ctx.root, id, e.status === 404 && !/^HTTP/.test(e.message) ? e.message : missing(e, 'the agents endpoint (GET /sluice/agents/{id})'));
    return;
  }
  let plugins = [];
  try { plugins = await api.call('GET', '/connector-plugins?connectorsOnly=false'); } catch { /* classes alone are shown then */ }
  const say = outcome('agent-outcome');
  const heading = h('h1', {}, id);
  const head = h('div', { class: 'page-head' }, heading, h('div', { class: 'actions' }));
  const facts = h('dl', { class: 'kv' });
  const drainBox = h('section', { id: 'drain', 'aria-labelledby': 'drain-h', hidden: true });
  const tasks = h('tbody');
  const pluginBody = h('tbody');
  mount(ctx.root,
    h('p', {}, link('/ui/agents', '‹ All agents')),
    head, say.el,
    h('div', { class: 'card' }, facts),
    drainBox,
    h('h2', { id: 'tasks-h' }, 'Tasks'),
    h('p', {}, link(`/ui/?agent=${api.enc(id)}`, `${id}'s connectors in the fleet list`), h('span', { class: 'muted' }, ', with their health')),
    h('table', { class: 'grid', id: 'agent-tasks', 'aria-labelledby': 'tasks-h' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Connector'), h('th', { scope: 'col', class: 'num' }, 'Task'), h('th', { scope: 'col' }, 'State'))),
      tasks),
    h('h2', { id: 'plugins-h' }, 'Plugins'),
    h('table', { class: 'grid', id: 'agent-plugins', 'aria-labelledby': 'plugins-h' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Class'), h('th', { scope: 'col' }, 'Type'), h('th', { scope: 'col' }, 'Version'))),
      pluginBody));

  const ops = say.handlers(() => refresh());
  function draw() {
    if (!remount(head.querySelector('.actions'), JSON.stringify([a.state, a.tasks, a.cordon, a.started_at, roughAgo(a.started_at)]), () => actions(a, ops))) return;
    mount(facts,
      h('dt', {}, 'State'), h('dd', {}, badge(a.state), a.cordon ? ` ${cordonWords(a)}` : ''),
      h('dt', {}, 'Heartbeat'), h('dd', {}, heartbeat(a)),
      h('dt', {}, 'Started'), h('dd', {}, when(a.started_at), a.started_at ? ` (${roughAgo(a.started_at)})` : ''),
      h('dt', {}, 'Version'), h('dd', {}, a.version || '—'),
      h('dt', {}, 'Labels'), h('dd', {}, labelList(a.labels)));
    mount(tasks, (a.tasks || []).length ? a.tasks.map(t => h('tr', {},
      h('td', {}, link(`/ui/connectors/${api.enc(t.connector)}`, t.connector)),
      h('td', { class: 'num' }, t.task),
      h('td', {}, badge(t.state))))
      : h('tr', {}, h('td', { colspan: 3, class: 'empty' }, 'This agent runs no task.')));
    // The agent announces classes; /connector-plugins says each class's
    // type and version in the fleet.
    const info = new Map();
    for (const p of plugins) info.set(p.class, [...(info.get(p.class) || []), p]);
    mount(pluginBody, (a.plugins || []).map(cls => {
      const ps = info.get(cls) || [];
      return h('tr', {}, h('td', { class: 'mono' }, cls), h('td', {}, ps[0] ? ps[0].type : '—'),
        h('td', {}, ps.length ? ps.map(p => p.version).join(', ') : '—'));
    }));
  }

  async function drainStatus() {
    if (a.state !== 'draining') { drainBox.hidden = true; return; }
    let d;
    try {
      d = await api.call('GET', `${base}/drain`);
    } catch (e) {
      drainBox.hidden = false;
      remount(drainBox, e.message, () => [h('h2', { id: 'drain-h' }, 'Drain'), h('p', { class: 'error' }, e.message)]);
      return;
    }
    const left = d.remaining.length;
    const total = d.moved + left;
    drainBox.hidden = false;
    remount(drainBox, JSON.stringify(d) + roughAgo(d.started_at), () => [
      h('h2', { id: 'drain-h' }, 'Drain'),
      h('div', { class: 'card', 'aria-live': 'polite' },
        h('p', {}, badge(d.state), h('span', { 'data-test': 'drain-state', class: 'sr-only' }, d.state), ' ',
          d.state === 'done' ? `${a.id} runs no task: it can be stopped or restarted.` : d.state === 'blocked' ? 'Some tasks have nowhere to go.' : `Moving tasks off ${a.id}.`,
          h('span', { class: 'muted' }, ` Started ${roughAgo(d.started_at)} by ${d.origin}${d.force ? ', forced' : ''}.`)),
        bar(d.moved, total, `${d.moved} of ${total} moved, ${left} left`, 'Drain progress'),
        d.moving.length ? h('p', {}, 'Moving now: ', d.moving.map(t => `${t.connector}-${t.task}`).join(', ')) : null,
        left ? h('details', { open: left <= 20 }, h('summary', {}, `Remaining (${left})`),
          h('ul', { 'data-test': 'drain-remaining' }, d.remaining.map(t => h('li', {}, `${t.connector} task ${t.task}`)))) : null,
        d.blocked.length ? h('div', {}, h('h3', {}, 'Blocked'),
          h('ul', { 'data-test': 'drain-blocked' }, d.blocked.map(b => h('li', {}, h('strong', {}, `${b.connector} task ${b.task}`), `: ${b.reason}`)))) : null)]);
    const p = drainBox.querySelector('progress');
    if (p) p.id = 'drain-progress';
  }

  async function refresh() {
    try {
      a = await api.call('GET', base);
    } catch (e) {
      say.fail(e.message);
      return;
    }
    draw();
    await drainStatus();
  }
  draw();
  await ctx.every(1500, refresh);
}
