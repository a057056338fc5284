// The actions of one connector's page: pause, resume, stop, restart,
// restart failed tasks and delete (each as the connector's state allows
// and the principal's role permits), and the move, rename and copy flows.
// The result of an action is said in a live region beside the buttons.

import { h, mount } from '../dom.js';
import * as api from '../api.js';
import { go } from '../router.js';
import { confirm, dialog } from './modal.js';

/**
 * actions builds the action bar for info (the connector page's info);
 * update(status) redraws it for a new status. o.refresh() reads the status
 * again after an action.
 */
export function actions(info, o) {
  const name = info.name;
  const path = `/connectors/${api.enc(name)}`;
  const buttons = h('div', { class: 'actions-bar', role: 'toolbar', 'aria-label': 'Connector actions' });
  const said = h('p', { id: 'conn-action-status', class: 'muted small', role: 'status', 'aria-live': 'polite', tabindex: '-1' });
  const error = h('p', { id: 'conn-action-error', class: 'error', role: 'alert', tabindex: '-1', hidden: true });
  const el = h('div', { id: 'conn-actions', class: 'conn-actions' }, buttons, said, error);
  let sig = null;

  const op = api.can('operator', name);
  const admin = api.can('admin', name);

  async function run(label, method, url, done, focusAfter) {
    error.hidden = true;
    said.textContent = `${label}…`;
    try {
      await api.call(method, url);
      said.textContent = done;
      await o.refresh();
    } catch (e) {
      said.textContent = '';
      error.textContent = `${label} failed: ${e.message}`;
      error.hidden = false;
    }
    // The button pressed may be gone (pause becomes resume): focus the
    // result instead of losing focus to the page.
    if (!document.activeElement || document.activeElement === document.body || !el.contains(document.activeElement)) (focusAfter || said).focus();
  }

  async function remove() {
    const reset = h('input', { type: 'checkbox', id: 'conn-delete-offsets' });
    const ok = await confirm(`Delete ${name}?`, h('div', {},
      h('p', {}, 'Its config and tasks go. This cannot be undone from the console.'),
      h('div', { class: 'check' }, reset, h('label', { for: reset.id }, ' Also delete its offsets (otherwise they stay in Kafka, and a connector of the same name later starts from them)')),
      info.state !== 'STOPPED' ? h('p', { class: 'muted small' }, 'Offsets are deleted only from a stopped connector: with this box ticked, it is stopped first.') : null),
    'Delete', 'danger');
    if (!ok) return;
    try {
      if (reset.checked && info.state !== 'STOPPED') {
        said.textContent = 'Stopping it first…';
        await api.call('PUT', `${path}/stop`);
      }
      said.textContent = 'Deleting…';
      await api.call('DELETE', `${path}${reset.checked ? '?reset_offsets=true' : ''}`);
      if (o.onDeleted) o.onDeleted();
      go('/ui/');
    } catch (e) {
      said.textContent = '';
      error.textContent = `Delete failed: ${e.message}`;
      error.hidden = false;
      error.focus();
    }
  }

  async function flow(kind) {
    error.hidden = true;
    try {
      const m = await import('./flows.js');
      await m[`${kind}Flow`](info);
      await o.refresh(); // a copy stops the old one; a cancelled flow changed nothing
    } catch (e) {
      error.textContent = `The ${kind} flow could not be started: ${e.message}`;
      error.hidden = false;
    }
  }

  async function restart() {
    const choice = await dialog(`Restart ${name}?`, h('p', {}, 'Restart the connector alone, or with its tasks.'), [
      { label: 'Cancel', value: null },
      { label: 'Connector only', value: '' },
      { label: 'Connector and all tasks', value: '?includeTasks=true', kind: 'primary' },
    ]);
    if (choice === null) return;
    await run('Restart', 'POST', `${path}/restart${choice}`, choice ? 'Restart asked for the connector and its tasks.' : 'Restart asked for the connector.');
  }

  function button(action, label, fn, kind) {
    return h('button', { type: 'button', class: kind || '', 'data-action': action, on: { click: fn } }, label);
  }

  /** update redraws the buttons when the state or the failed tasks changed. */
  function update(st) {
    const state = st.connector.state;
    const failed = st.connector.state === 'FAILED' || st.tasks.some(t => t.state === 'FAILED');
    const next = `${state}|${failed}`;
    if (next === sig) return;
    sig = next;
    if (!op && !admin) { mount(buttons); return; }
    const b = [];
    if (op) {
      if (state !== 'PAUSED' && state !== 'STOPPED') b.push(button('pause', 'Pause', () => run('Pause', 'PUT', `${path}/pause`, 'Paused: its tasks pause as they confirm.')));
      if (state === 'PAUSED' || state === 'STOPPED') b.push(button('resume', 'Resume', () => run('Resume', 'PUT', `${path}/resume`, 'Resumed: its tasks start.'), 'primary'));
      if (state !== 'STOPPED') b.push(button('stop', 'Stop', () => run('Stop', 'PUT', `${path}/stop`, 'Stopped: its tasks are shut down.')));
      b.push(button('restart', 'Restart…', restart));
      if (failed) b.push(button('restart-failed', 'Restart failed tasks', () => run('Restart failed tasks', 'POST', `${path}/restart?includeTasks=true&onlyFailed=true`, 'Restart asked for the failed tasks.')));
    }
    if (admin) {
      b.push(h('span', { class: 'sep', 'aria-hidden': 'true' }));
      b.push(button('move', 'Move…', () => flow('move')));
      b.push(button('rename', 'Rename…', () => flow('rename')));
      b.push(button('copy', 'Copy…', () => flow('copy')));
      b.push(button('delete', 'Delete…', remove, 'danger'));
    }
    mount(buttons, b);
  }

  return { el, update };
}
