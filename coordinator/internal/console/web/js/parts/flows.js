// Move, rename and copy a connector with its positions, as guided flows
// over POST /sluice/connectors/{name}/move (docs/offsets.md, "Move,
// rename and copy"): the coordinator stops the connector, reads its
// positions, creates the new one at them, and — unless it is a copy —
// removes the old one; any failure undoes what was done and names the
// step. Each flow: the new name (and config changes) → dry run → the plan
// (steps, the new config, the positions carried over) → apply → the
// steps done and the positions the new connector starts from.
//
//   renameFlow(info)  the same config under a new name
//   moveFlow(info)    a new name and config changes (say, another agent
//                     selector or topic): the old one goes
//   copyFlow(info)    a new connector at the same positions; the old one
//                     stays, stopped (two copies of a source read twice)
//
// info = {name, type, state, config}. Each resolves with the move's answer
// once the dialog closes (null when nothing was done). allowed(name) says
// whether to offer them.
//
// Stable hooks: dialog[data-flow=move|rename|copy]; input[data-test=
// move-to], textarea[data-test=move-config], input[data-test=
// move-reason]; buttons data-test= move-dry-run, move-apply, move-back,
// move-cancel, move-close, move-open, move-resume-old; ol[data-test=
// move-steps] > li[data-step=<n>]; table[data-test=move-positions];
// table[data-test=move-config-diff]; p[data-test=move-error].

import { h, mount, field } from '../dom.js';
import * as api from '../api.js';
import { go } from '../router.js';
import { openFlow, button } from './flowdialog.js';
import { parse, stringify } from './json.js';
import { partitionCell, offsetCell } from './offsets-diff.js';
import * as life from './lifecycle.js';

const MODES = {
  rename: { title: 'Rename', verb: 'Rename', copy: false, config: false,
    what: 'The connector goes on under the new name exactly where it stopped; the old name is deleted with its positions.' },
  move: { title: 'Move', verb: 'Move', copy: false, config: true,
    what: 'A new connector takes over at the old one\'s positions, with the config changes you give (another agent selector puts it on other agents); the old one is deleted with its positions.' },
  copy: { title: 'Copy', verb: 'Copy', copy: true, config: true,
    what: 'A new connector starts at the old one\'s positions, with the config changes you give; the old one stays, STOPPED at its positions (two copies of a source would read the same data twice).' },
};

/**
 * allowed says whether the signed-in principal may move, rename or copy
 * connector name (the move route is the admin's): show the flows'
 * buttons only then. The server checks again, the new name's grant too.
 */
export function allowed(name) { return api.can('admin', name); }

/** renameFlow renames connector info.name with its positions. */
export function renameFlow(info) { return moveLike('rename', info); }

/** moveFlow moves connector info.name to a new name and config with its positions. */
export function moveFlow(info) { return moveLike('move', info); }

/** copyFlow copies connector info.name, with its positions, to a new connector. */
export function copyFlow(info) { return moveLike('copy', info); }

async function moveLike(mode, info) {
  const m = MODES[mode];
  const old = info.name;
  const f = openFlow(mode, `${m.title} ${old}`, [
    { key: 'choose', label: mode === 'rename' ? 'Choose the new name' : 'Choose the new name and config' },
    { key: 'dry-run', label: 'Dry run' },
    { key: 'review', label: 'Review the plan and the positions carried over' },
    { key: 'apply', label: m.verb },
  ]);
  const to = h('input', { type: 'text', 'data-test': 'move-to', autocomplete: 'off', spellcheck: 'false', value: suggest(old, mode) });
  const cfg = h('textarea', { rows: 4, spellcheck: 'false', 'data-test': 'move-config', placeholder: 'topic=orders-v2\nsluice.agent.selector=zone=b' });
  const reason = h('input', { type: 'text', maxlength: 1024, 'data-test': 'move-reason' });
  const err = h('p', { class: 'error', role: 'alert', 'data-test': 'move-error', hidden: true });
  let result = null;

  function choose() {
    f.step('choose', 'active');
    f.step('dry-run', '');
    f.step('review', '');
    f.status('');
    mount(f.body,
      h('p', {}, m.what),
      field('New name', to),
      m.config ? field('Config changes (key=value, one a line)', cfg, 'Keys of the new connector\'s config to set; the others are copied as they are. Its name is set for you.') : null,
      err);
    f.actions(button('Cancel', 'move-cancel', () => f.close(null)), button('Dry run…', 'move-dry-run', () => dryRun(), 'primary'));
    to.focus();
  }

  // request reads the form into the move's body; it marks what is wrong.
  function request() {
    err.hidden = true;
    for (const c of [to, cfg]) c.removeAttribute('aria-invalid');
    const name = to.value.trim();
    const fail = (ctl, msg) => { ctl.setAttribute('aria-invalid', 'true'); err.textContent = msg; err.hidden = false; ctl.focus(); return null; };
    if (!name) return fail(to, 'Give the new connector\'s name.');
    if (name === old) return fail(to, `The new name must differ from ${old}.`);
    const body = { to: name };
    if (mode === 'copy') body.copy = true;
    if (m.config && cfg.value.trim()) {
      const config = {};
      for (const [i, raw] of cfg.value.split('\n').entries()) {
        const line = raw.trim();
        if (!line || line.startsWith('#')) continue;
        const eq = line.indexOf('=');
        if (eq <= 0) return fail(cfg, `Line ${i + 1} is not key=value: "${line}".`);
        config[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
      }
      body.config = config;
    }
    return body;
  }

  async function call(body, dryRun) {
    const headers = reason.value.trim() ? { 'X-Sluice-Reason': reason.value.trim() } : {};
    const text = await api.call('POST', `/sluice/connectors/${api.enc(old)}/move`, undefined,
      { raw: true, text: stringify({ ...body, dry_run: dryRun }), headers });
    return parse(text);
  }

  async function dryRun() {
    const body = request();
    if (!body) return;
    f.step('choose', 'done');
    f.step('dry-run', 'active');
    f.status('Asking the coordinator for the plan (nothing is changed)…');
    f.busy(true);
    let plan;
    try {
      plan = await call(body, true);
    } catch (e) {
      f.busy(false);
      choose();
      f.step('dry-run', 'failed');
      f.status('The dry run failed; nothing was changed.', 'error');
      err.textContent = e.message;
      err.hidden = false;
      return;
    }
    f.busy(false);
    f.step('dry-run', 'done');
    review(body, plan);
  }

  function review(body, plan) {
    f.step('review', 'active');
    const n = (plan.offsets || []).length;
    f.status(`Dry run done: ${plan.to} would start ${plan.target_state || ''} at ${n} position${n === 1 ? '' : 's'}. Review, then ${m.verb.toLowerCase()}.`);
    mount(f.body,
      h('h3', {}, 'What the coordinator will do'),
      stepsList(plan.steps || []),
      positions(plan.offsets || [], `Positions ${plan.to} would start from (as they are now; the stop may still move them)`),
      configDiff(info.config || {}, plan.config || {}, plan.to),
      field('Reason (kept in the offsets history)', reason));
    f.actions(button('Back', 'move-back', () => choose()), button('Cancel', 'move-cancel', () => f.close(null)),
      button(`${m.verb} ${old} → ${plan.to}`, 'move-apply', () => apply(body, plan), 'primary'));
  }

  async function apply(body, plan) {
    f.step('review', 'done');
    f.step('apply', 'active');
    f.status(`${m.verb === 'Copy' ? 'Copying' : m.verb === 'Move' ? 'Moving' : 'Renaming'}: the coordinator stops ${old}, reads its positions and creates ${plan.to} at them…`);
    const list = stepsList((plan.steps || []).map((s, i) => ({ ...s, state: s.state === 'skipped' ? 'skipped' : i === 0 ? 'active' : '' })));
    mount(f.body, h('h3', {}, 'Steps'), list, h('progress', { 'aria-label': `${m.verb} in progress` }));
    f.busy(true);
    try {
      result = await call(body, false);
    } catch (e) {
      f.busy(false);
      f.step('apply', 'failed');
      const at = /failed at step '([^']+)'/.exec(e.message);
      markFailed(list, at ? at[1] : '');
      f.status(`${m.verb} failed.`, 'error');
      mount(f.body, h('h3', {}, 'Steps'), list,
        h('p', { class: 'error', role: 'alert', 'data-test': 'move-error' }, e.message),
        h('p', {}, at ? `The steps before it were undone: ${old} is as it was.` : `Check ${old} and ${plan.to} before trying again.`));
      f.actions(button('Back', 'move-back', () => choose()), button('Close', 'move-close', () => f.close(null), 'primary'));
      return;
    }
    f.busy(false);
    f.step('apply', 'done');
    f.status(`${m.verb} done: ${result.to} is ${result.target_state || 'created'}.`, 'ok');
    // The new connector was started in the state the old one had: the
    // old one may go back to it too, by choice.
    const was = result.target_state;
    const resumeOld = mode === 'copy' && (was === 'RUNNING' || was === 'PAUSED') && api.can('operator', old)
      ? button(`${was === 'PAUSED' ? 'Pause' : 'Resume'} ${old} too`, 'move-resume-old', () => resumeOriginal(was)) : null;
    mount(f.body,
      h('h3', {}, 'Steps'), stepsList(result.steps || []),
      h('p', { class: 'ok' }, `${result.to} starts where ${old} stopped`, result.history_id ? ['; offsets history entry ', h('code', { 'data-test': 'history-id' }, result.history_id)] : null, '.'),
      positions(result.offsets || [], `Positions carried over to ${result.to}`),
      mode === 'copy' ? h('p', { class: 'notice warn' }, `${old} is left STOPPED at its positions. Resume it only if both should run: two copies of a source read the same data twice.`) : null);
    f.actions(resumeOld, button('Close', 'move-close', () => f.close(result)),
      button(`Open ${result.to}`, 'move-open', () => { f.close(result); go(`/ui/connectors/${api.enc(result.to)}`); }, 'primary'));
  }

  async function resumeOriginal(state) {
    f.status(`Putting ${old} back to ${state}…`);
    f.busy(true);
    try {
      await life.putBack(old, state);
      await life.waitFor(old, state, s => f.status(`${old} shows ${life.describe(s)}…`));
      f.status(`${old} is ${state} again.`, 'ok');
      const done = f.dialog.querySelector('[data-test=move-resume-old]');
      if (done) done.dataset.off = '1'; // busy(false) leaves it off
    } catch (e) {
      f.status(`Putting ${old} back to ${state} failed: ${e.message}`, 'error');
    } finally {
      f.busy(false);
    }
  }

  choose();
  return f.closed;
}

// suggest is a first new name: the old one with -v2 (or the next number).
function suggest(old, mode) {
  const m = /^(.*-v)(\d+)$/.exec(old);
  if (m) return `${m[1]}${Number(m[2]) + 1}`;
  return mode === 'copy' ? `${old}-copy` : `${old}-v2`;
}

// stepsList shows the coordinator's steps with their states (planned,
// done, skipped, active, failed).
function stepsList(steps) {
  return h('ol', { class: 'steps server-steps', 'data-test': 'move-steps' }, steps.map((s, i) => {
    const state = s.state === 'planned' ? '' : s.state;
    return h('li', { class: state, 'data-step': String(i) }, s.step, s.state === 'skipped' ? h('span', { class: 'muted' }, ' — skipped') : null);
  }));
}

// markFailed marks the step named (or the first one not done) failed in
// a steps list, and leaves the later ones as they are: not done.
function markFailed(list, name) {
  const items = [...list.querySelectorAll('li')];
  const i = Math.max(0, items.findIndex(li => li.firstChild && li.firstChild.textContent === name));
  items.forEach((li, j) => {
    if (li.classList.contains('skipped')) return;
    li.className = j < i ? 'done' : j === i ? 'failed' : '';
  });
}

function positions(offsets, caption) {
  if (!offsets.length) return h('p', { class: 'muted' }, 'No position to carry over: the new connector starts as a new one would.');
  return h('table', { class: 'grid carried', 'data-test': 'move-positions' },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Partition'), h('th', { scope: 'col' }, 'Offset'))),
    h('tbody', {}, offsets.map(o => h('tr', {}, h('th', { scope: 'row', class: 'part' }, partitionCell(o.partition)), h('td', {}, offsetCell(o.offset))))));
}

// configDiff shows the new connector's config against the old one's, the
// keys that differ marked.
function configDiff(before, after, to) {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return h('table', { class: 'diff config-diff', 'data-test': 'move-config-diff' },
    h('caption', {}, `Config of ${to}`),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Key'), h('th', { scope: 'col' }, 'Now'), h('th', { scope: 'col' }, 'New'))),
    h('tbody', {}, keys.map(k => {
      const same = before[k] === after[k];
      return h('tr', { class: same ? 'same' : '' },
        h('th', { scope: 'row' }, k),
        h('td', { class: same ? '' : 'del' }, before[k] === undefined ? '—' : before[k]),
        h('td', { class: same ? '' : 'add' }, after[k] === undefined ? '—' : after[k]));
    })));
}
