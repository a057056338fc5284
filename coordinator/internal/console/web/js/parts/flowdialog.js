// A guided flow in a modal <dialog>: a list of steps that fill in as they
// run (done, active, failed), a body the flow replaces at each stage, a
// status line read out by screen readers, and the flow's buttons. Escape
// closes it only while no step is running: a half-watched operation is
// worse than a slow one.
//
// Stable hooks for browser tests: dialog[data-test=flow] (its data-flow
// names the flow), ol[data-test=flow-steps] > li[data-step=<key>] with the
// classes done / active / failed, [data-test=flow-status], and the
// buttons' data-test given by each flow.

import { h, mount } from '../dom.js';

/**
 * openFlow shows the dialog. steps: [{key, label}]. It returns the
 * controller: body (the element a stage fills), step(key, state, note),
 * status(text), actions(buttons), busy(on), close(value), and closed (a
 * promise of the value close was called with; null for Escape).
 */
export function openFlow(flow, title, steps) {
  const back = document.activeElement;
  const titleId = `flow-title-${Math.random().toString(36).slice(2, 8)}`;
  const dlg = h('dialog', { class: 'modal flow', 'aria-labelledby': titleId, 'data-test': 'flow', 'data-flow': flow });
  const list = h('ol', { class: 'steps', 'data-test': 'flow-steps', 'aria-label': 'Steps' });
  const items = new Map();
  const body = h('div', { class: 'flow-body' });
  const statusLine = h('p', { class: 'flow-status', role: 'status', 'aria-live': 'polite', 'data-test': 'flow-status', tabindex: '-1' });
  const bar = h('div', { class: 'actions' });
  let running = false;
  let resolve;
  const closed = new Promise(r => { resolve = r; });

  for (const s of steps) {
    const note = h('span', { class: 'step-note' });
    const li = h('li', { 'data-step': s.key }, h('span', { class: 'step-label' }, s.label), note);
    items.set(s.key, { li, note });
    list.append(li);
  }
  mount(dlg, h('h2', { id: titleId }, title), steps.length ? list : null, statusLine, body, bar);
  dlg.addEventListener('cancel', e => { e.preventDefault(); if (!running) ctl.close(null); });
  document.getElementById('modal-root').append(dlg);
  dlg.showModal();

  const ctl = {
    dialog: dlg,
    body,
    closed,
    /** step marks a step: state is '', 'active', 'done', 'failed' or 'skipped'; note is said beside it. */
    step(key, state, note) {
      const it = items.get(key);
      if (!it) return;
      it.li.className = state || '';
      if (state === 'active') it.li.setAttribute('aria-current', 'step'); else it.li.removeAttribute('aria-current');
      it.note.textContent = note ? ` — ${note}` : '';
    },
    /** stateOf is a step's state: '', 'active', 'done', 'failed' or 'skipped'. */
    stateOf(key) {
      const it = items.get(key);
      return it ? it.li.className : '';
    },
    /**
     * status says what is happening now (read out politely); spoken, a
     * text only screen readers get (the message a step beside shows).
     */
    status(text, kind, spoken) {
      mount(statusLine, text || '', spoken ? h('span', { class: 'sr-only' }, ` ${spoken}`) : null);
      statusLine.className = `flow-status${kind ? ` ${kind}` : ''}`;
    },
    /** actions replaces the buttons; the first primary or danger one takes the focus. */
    actions(...buttons) {
      mount(bar, buttons);
      const first = bar.querySelector('button.primary:not([disabled]), button.danger:not([disabled])') || bar.querySelector('button:not([disabled])');
      if (first) first.focus();
    },
    /** busy marks a step running: Escape does not close, and the buttons are off. */
    busy(on) {
      running = on;
      // The button pressed is about to be disabled, which would drop the
      // focus out of the dialog: keep it on what is happening.
      if (on && bar.contains(document.activeElement)) statusLine.focus();
      dlg.setAttribute('aria-busy', String(on));
      for (const b of bar.querySelectorAll('button')) b.disabled = on || b.dataset.off === '1';
    },
    close(value) {
      if (!dlg.open) return;
      dlg.close();
      dlg.remove();
      if (back && back.isConnected && back.focus) back.focus();
      resolve(value === undefined ? null : value);
    },
  };
  return ctl;
}

/** button is a flow's button: label, data-test hook, click handler and kind (primary, danger). */
export function button(label, test, onClick, kind = '') {
  return h('button', { type: 'button', class: kind, 'data-test': test, on: { click: onClick } }, label);
}
