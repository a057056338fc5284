// The rebalance panel of the agents page: the rebalance in progress or
// the last one (GET /sluice/rebalance), and for an admin a preview — the
// dry run's moves and each agent's tasks before and after — before the
// rebalance is started (POST /sluice/rebalance).
//
// Stable hooks: section#rebalance, input#rebalance-max-moves,
// button#rebalance-preview, table#rebalance-plan, button#rebalance-apply,
// #rebalance-outcome, table#rebalance-moves (the one running or last run).

import { h, mount, num, badge } from '../dom.js';
import * as api from '../api.js';
import { confirm } from './modal.js';
import { outcome, missing, plural, focusFirst, remount, bar } from './fleetkit.js';

/** rebalancePanel builds the panel; start() polls its status while shown. */
export function rebalancePanel(ctx) {
  const say = outcome('rebalance-outcome');
  const status = h('div', { 'aria-live': 'polite' });
  const plan = h('div');
  const maxMoves = h('input', { id: 'rebalance-max-moves', type: 'number', min: 1, max: 1000, value: 2, class: 'fk-narrow' });
  const preview = h('button', { id: 'rebalance-preview', type: 'button', on: { click: () => doPreview() } }, 'Preview rebalance');
  const admin = api.can('admin');
  let placement = [];
  const el = h('section', { id: 'rebalance', 'aria-labelledby': 'rebalance-h', class: 'fk-section' },
    h('h2', { id: 'rebalance-h' }, 'Rebalance'),
    h('p', { class: 'muted' }, 'Placement is sticky: agents that join or come back get only new tasks. A rebalance evens tasks out across the live, uncordoned agents, within each task\'s selector and plugin — only when asked.'),
    admin ? h('div', { class: 'toolbar' },
      h('label', { for: 'rebalance-max-moves' }, 'Moves at a time'), maxMoves, preview) : null,
    say.el, plan, status);

  async function doPreview() {
    say.clear();
    preview.disabled = true;
    try {
      const p = await api.call('POST', `/sluice/rebalance?dry_run=true&max_moves=${encodeURIComponent(maxMoves.value || 2)}`);
      showPlan(p);
    } catch (e) {
      say.fail(`Preview: ${missing(e, 'rebalances (POST /sluice/rebalance)')}`);
    } finally {
      preview.disabled = false;
    }
  }

  function showPlan(p) {
    const agents = [...new Set([...Object.keys(p.before || {}), ...Object.keys(p.after || {})])].sort();
    const apply = h('button', { id: 'rebalance-apply', type: 'button', class: 'primary', disabled: !p.moves.length,
      on: { click: () => doApply(p) } }, p.moves.length ? `Rebalance: ${plural(p.moves.length, 'move')}` : 'Nothing to move');
    mount(plan, h('div', { class: 'card fk-plan' },
      h('h3', { id: 'rebalance-plan-h', tabindex: '-1' }, p.moves.length ? `The rebalance would move ${plural(p.moves.length, 'task')}` : 'The tasks are even already: a rebalance would move nothing'),
      h('table', { class: 'grid', id: 'rebalance-plan', 'aria-labelledby': 'rebalance-plan-h' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Agent'), h('th', { scope: 'col', class: 'num' }, 'Tasks now'), h('th', { scope: 'col', class: 'num' }, 'After'))),
        h('tbody', {}, agents.map(a => h('tr', {}, h('th', { scope: 'row' }, a), h('td', { class: 'num' }, num(p.before[a] || 0)),
          h('td', { class: ['num', (p.after[a] || 0) !== (p.before[a] || 0) ? 'fk-changed' : ''] }, num(p.after[a] || 0)))))),
      p.moves.length ? movesTable(p.moves, 'rebalance-plan-moves', false) : null,
      h('p', { class: 'muted' }, `Tasks move ${p.max_moves} at a time, each as a drain moves it. The leader plans again when you start it: a task gone or moved since is skipped.`),
      h('div', { class: 'actions' }, h('button', { type: 'button', on: { click: () => { mount(plan); focusFirst(preview); } } }, 'Dismiss'), apply)));
    focusFirst(plan.querySelector('h3'));
  }

  async function doApply(p) {
    if (!await confirm(`Move ${plural(p.moves.length, 'task')}?`, h('p', {},
      `Each task is stopped on its agent, its stop confirmed, fenced and started on the other agent from its committed offsets, ${p.max_moves} at a time.`),
    'Start the rebalance')) return;
    try {
      await api.call('POST', `/sluice/rebalance?max_moves=${encodeURIComponent(p.max_moves)}`);
      mount(plan);
      say.ok('Rebalance started: its moves are shown below as they are made.');
      focusFirst(say.el);
      await poll();
    } catch (e) {
      say.fail(`Rebalance: ${e.message}`);
      focusFirst(say.el);
    }
  }

  async function poll() {
    let r;
    try {
      r = await api.call('GET', '/sluice/rebalance');
    } catch (e) {
      const none = e.status === 404 && !/^HTTP/.test(e.message);
      remount(status, e.message + placementWords(), () => h('p', { class: none ? 'muted' : 'error' }, none ? `${e.message}: ${placementWords()}` : missing(e, 'rebalances (GET /sluice/rebalance)')));
      return;
    }
    const done = r.moves.filter(m => m.state === 'done' || m.state === 'skipped').length;
    remount(status, JSON.stringify(r), () => h('div', {},
      h('h3', {}, r.state === 'running' ? 'Rebalance in progress' : 'Last rebalance', ' ', badge(r.state)),
      bar(done, r.moves.length, `${done} of ${plural(r.moves.length, 'move')} made`, 'Rebalance progress'),
      r.before ? h('p', { class: 'muted' }, 'Tasks per agent, planned: ', Object.keys(r.before).sort().map(a => `${a} ${r.before[a]} → ${(r.after || {})[a] ?? r.before[a]}`).join(', '), '.') : null,
      r.moves.length ? movesTable(r.moves, 'rebalance-moves', true) : null));
  }

  function placementWords() {
    return placement.length ? `tasks per agent now: ${placement.map(a => `${a.id} ${(a.tasks || []).length}`).join(', ')}.` : 'no agent.';
  }

  return {
    el,
    start: () => ctx.every(2000, poll),
    agents: list => { placement = list.filter(a => a.registered); },
  };
}

function movesTable(moves, id, withState) {
  return h('table', { class: 'grid', id },
    h('caption', { class: 'sr-only' }, 'Task moves'),
    h('thead', {}, h('tr', {}, ['Connector', 'Task', 'From', 'To', withState ? 'State' : null].filter(Boolean).map(c => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, moves.map(m => h('tr', {},
      h('td', {}, m.connector), h('td', {}, m.task), h('td', {}, m.from), h('td', {}, m.to),
      withState ? h('td', {}, badge(m.state)) : null))));
}
