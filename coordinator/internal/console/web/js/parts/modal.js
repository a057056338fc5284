// A modal dialog on the native <dialog>: focus stays inside it, Escape
// closes it, and focus goes back where it was.

import { h, mount } from '../dom.js';

/**
 * dialog shows a modal with title and body, and the buttons given as
 * [{label, value, kind}]; it resolves with the value of the button
 * pressed (null for Escape or Cancel).
 */
export function dialog(title, body, buttons) {
  const back = document.activeElement;
  return new Promise(resolve => {
    const dlg = h('dialog', { class: 'modal', 'aria-labelledby': 'modal-title' });
    const done = v => {
      dlg.close();
      dlg.remove();
      // The button that opened it may be gone (a bulk bar that closed):
      // then the page's main region takes the focus, not <body>.
      if (back && back.isConnected && back.focus) back.focus(); else document.getElementById('main').focus();
      resolve(v);
    };
    mount(dlg,
      h('h2', { id: 'modal-title' }, title),
      h('div', { class: 'modal-body' }, body),
      h('div', { class: 'actions' }, buttons.map(b =>
        h('button', { type: 'button', class: b.kind || '', on: { click: () => done(b.value) } }, b.label))));
    dlg.addEventListener('cancel', e => { e.preventDefault(); done(null); });
    document.getElementById('modal-root').append(dlg);
    dlg.showModal();
    const first = dlg.querySelector('button.primary, button.danger') || dlg.querySelector('button');
    if (first) first.focus();
  });
}

/** confirm asks a yes/no question; resolves true for yes. */
export async function confirm(title, body, yes, kind = 'primary') {
  return (await dialog(title, body, [{ label: 'Cancel', value: false }, { label: yes, value: true, kind }])) === true;
}

/** results shows a table of per-connector results of a bulk action. */
export function results(title, rows) {
  const ok = rows.filter(r => r.ok).length;
  return dialog(title, h('div', {},
    h('p', {}, `${ok} of ${rows.length} done.`),
    h('table', { class: 'grid' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Connector'), h('th', { scope: 'col' }, 'Result'))),
      h('tbody', {}, rows.map(r => h('tr', {},
        h('td', {}, r.name),
        h('td', { class: r.ok ? 'ok' : 'error' }, r.message)))))),
  [{ label: 'Close', value: true, kind: 'primary' }]);
}
