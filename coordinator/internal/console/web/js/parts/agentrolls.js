// The rolling restarts of agents, on the agents page: each roll with its
// batches and every agent's step, live; for an admin, a form that starts
// one (agents, batch size, timeout) and pause, resume, abort.
// /ui/agents?roll=<id> opens that roll.
//
// Stable hooks: section#rolls, button#roll-new, form#roll-form,
// input[name=roll-agent] (one per agent), input#roll-batch-size,
// input#roll-timeout, button#roll-start, #roll-outcome,
// article[data-roll=<id>] with [data-test=roll-state],
// button[data-test=roll-pause|roll-resume|roll-abort], table.roll-agents.

import { h, mount, badge, when } from '../dom.js';
import * as api from '../api.js';
import { confirm } from './modal.js';
import { outcome, bar, missing, plural, focusFirst, remount, roughAgo } from './fleetkit.js';
import { setQuery } from '../router.js';

const ENDED = ['done', 'failed', 'aborted'];

// What each step of an agent means, for the people who must act on it.
const STEP_WORDS = {
  pending: 'waits for its batch',
  draining: 'its tasks are moving to other agents',
  waiting_restart: 'drained: restart it now (the coordinator runs no command)',
  uncordoning: 'came back; being uncordoned',
  done: 'restarted and back in service',
  failed: 'the roll failed here; the agent is left as it was',
};

/** rollsPanel builds the panel; start() polls the rolls while shown. */
export function rollsPanel(ctx) {
  const say = outcome('roll-outcome');
  const list = h('div', { 'aria-live': 'polite' });
  const form = h('div');
  const admin = api.can('admin');
  let agents = [];
  let opened = ctx.query.get('roll');
  let scrolled = !opened; // a deep link scrolls to its roll once
  const newBtn = admin ? h('button', { id: 'roll-new', type: 'button', on: { click: () => showForm() } }, 'Start a rolling restart…') : null;
  const el = h('section', { id: 'rolls', 'aria-labelledby': 'rolls-h', class: 'fk-section' },
    h('div', { class: 'page-head' }, h('h2', { id: 'rolls-h' }, 'Rolling restarts'), newBtn),
    h('p', { class: 'muted' }, 'A roll drains each agent, waits until it registers again as a new process (you, a script or Kubernetes restart it), and uncordons it, batch by batch. It runs in the coordinator: closing this page does not stop it.'),
    form, say.el, list);

  function showForm() {
    const registered = agents.filter(a => a.registered);
    const boxes = registered.map(a => h('label', { class: 'fk-check' },
      h('input', { type: 'checkbox', name: 'roll-agent', value: a.id, checked: true }), ` ${a.id} `,
      h('span', { class: 'muted' }, `(${plural((a.tasks || []).length, 'task')})`)));
    const size = h('input', { id: 'roll-batch-size', type: 'number', min: 1, value: 1, class: 'fk-narrow' });
    const timeout = h('input', { id: 'roll-timeout', value: '10m', class: 'fk-narrow', 'aria-describedby': 'roll-timeout-help' });
    const err = h('p', { class: 'error', role: 'alert', hidden: true });
    const f = h('form', { id: 'roll-form', class: 'card', on: { submit: async e => {
      e.preventDefault();
      const chosen = [...f.querySelectorAll('input[name=roll-agent]:checked')].map(i => i.value);
      if (!chosen.length) { err.textContent = 'Choose at least one agent.'; err.hidden = false; return; }
      const body = { agents: chosen, batch_size: Number(size.value) || 1, timeout: timeout.value.trim() || '10m' };
      if (!await confirm(`Restart ${plural(chosen.length, 'agent')}, ${body.batch_size} at a time?`, h('div', {},
        h('p', {}, `Each agent is drained, then waits for you to restart it; once it registers again it is uncordoned. Each step may take up to ${body.timeout}.`),
        h('p', {}, `Order: ${chosen.join(', ')}.`)), 'Start the roll')) return;
      try {
        const roll = await api.call('POST', '/sluice/fleet/rolls', body);
        mount(form);
        opened = roll.id;
        setQuery({ roll: roll.id });
        say.ok(`Roll ${roll.id} started.`);
        focusFirst(say.el);
        await refresh();
      } catch (e2) {
        err.textContent = e2.message;
        err.hidden = false;
        focusFirst(err);
      }
    } } },
    h('h3', { id: 'roll-form-h' }, 'Start a rolling restart'),
    h('fieldset', {}, h('legend', {}, 'Agents, in the order they roll'), boxes.length ? boxes : h('p', { class: 'muted' }, 'No agent is registered.')),
    h('div', { class: 'fk-row' },
      h('div', { class: 'field' }, h('label', { for: 'roll-batch-size' }, 'Agents at a time'), size),
      h('div', { class: 'field' }, h('label', { for: 'roll-timeout' }, 'Timeout per step'), timeout,
        h('div', { class: 'help', id: 'roll-timeout-help' }, 'A Go duration (10m, 90s): how long each agent may take to drain, and then to come back.'))),
    err,
    h('div', { class: 'actions' },
      h('button', { type: 'button', on: { click: () => { mount(form); focusFirst(newBtn); } } }, 'Cancel'),
      h('button', { id: 'roll-start', type: 'submit', class: 'primary', disabled: !boxes.length }, 'Start…')));
    mount(form, f);
    focusFirst(f.querySelector('h3'));
  }

  async function act(roll, verb) {
    const words = { pause: 'Pause', resume: 'Resume', abort: 'Abort' }[verb];
    if (verb === 'abort' && !await confirm(`Abort roll ${roll.id}?`, h('p', {},
      'It stops for good. Agents are left as they are: one draining or cordoned stays so until you uncordon it.'), 'Abort the roll', 'danger')) return;
    try {
      await api.call('PUT', `/sluice/fleet/rolls/${api.enc(roll.id)}/${verb}`);
      say.ok(`${words}: roll ${roll.id} is ${verb === 'resume' ? 'running' : verb === 'pause' ? 'paused' : 'aborted'}.`);
    } catch (e) {
      say.fail(`${words} roll ${roll.id}: ${e.message}`);
    }
    focusFirst(say.el);
    await refresh();
  }

  function card(r) {
    const ended = ENDED.includes(r.state);
    const buttons = admin && !ended ? [
      r.state === 'running' ? h('button', { type: 'button', 'data-test': 'roll-pause', on: { click: () => act(r, 'pause') } }, 'Pause') : null,
      r.state === 'paused' ? h('button', { type: 'button', 'data-test': 'roll-resume', on: { click: () => act(r, 'resume') } }, 'Resume') : null,
      h('button', { type: 'button', class: 'danger', 'data-test': 'roll-abort', on: { click: () => act(r, 'abort') } }, 'Abort…'),
    ] : null;
    const body = [
      h('div', { class: 'fk-row' },
        bar(r.progress.done, r.progress.total, `${r.progress.done} of ${plural(r.progress.total, 'agent')} rolled`, `Roll ${r.id} progress`),
        buttons ? h('div', { class: 'fk-actions' }, buttons) : null),
      r.error ? h('p', { class: 'error' }, r.error) : null,
      h('table', { class: 'grid roll-agents' },
        h('caption', { class: 'sr-only' }, `Agents of roll ${r.id}`),
        h('thead', {}, h('tr', {}, ['Batch', 'Agent', 'Step', 'Since', 'Tasks moved', 'Started before', 'Restarted', 'Version'].map(c => h('th', { scope: 'col', class: c === 'Tasks moved' ? 'num' : null }, c)))),
        h('tbody', {}, r.agents.map(a => h('tr', { class: a.batch === r.batch && !ended ? 'fk-current' : null },
          h('td', {}, a.batch + 1),
          h('th', { scope: 'row' }, a.id),
          h('td', {}, badge(a.step.replace('_', ' ')), h('div', { class: 'reason' }, a.error || STEP_WORDS[a.step] || '')),
          h('td', {}, roughAgo(a.since)),
          h('td', { class: 'num' }, a.moved),
          h('td', {}, when(a.started_at)),
          h('td', {}, when(a.restarted_at)),
          h('td', {}, a.version || '—'))))),
    ];
    const summary = [h('strong', {}, r.id), ' ', badge(r.state), h('span', { 'data-test': 'roll-state', class: 'sr-only' }, r.state),
      h('span', { class: 'muted' }, ` by ${r.principal || 'anonymous'}, ${roughAgo(r.created_at)} — ${r.progress.done}/${r.progress.total} agents`)];
    return h('article', { class: 'card fk-item', 'data-roll': r.id },
      h('details', { open: !ended || r.id === opened, on: { toggle: e => { if (e.target.open) { opened = r.id; setQuery({ roll: r.id }); } } } },
        h('summary', {}, summary), body));
  }

  async function refresh() {
    let rolls;
    try {
      rolls = (await api.call('GET', '/sluice/fleet/rolls')).rolls || [];
    } catch (e) {
      remount(list, e.message, () => h('p', { class: 'error' }, missing(e, 'rolling restarts (GET /sluice/fleet/rolls)')));
      return;
    }
    rolls = rolls.slice().reverse(); // newest first
    const key = JSON.stringify(rolls.map(r => [r, roughAgo(r.created_at), r.agents.map(a => roughAgo(a.since))]));
    const fresh = remount(list, key, () => rolls.length ? rolls.map(card) : h('p', { class: 'muted' }, 'No roll yet.'));
    if (fresh && !scrolled) {
      const art = list.querySelector(`article[data-roll="${CSS.escape(opened)}"]`);
      if (art) { scrolled = true; art.scrollIntoView({ block: 'start' }); }
    }
  }

  return {
    el,
    start: () => ctx.every(2000, refresh),
    agents: list2 => { agents = list2; },
  };
}
