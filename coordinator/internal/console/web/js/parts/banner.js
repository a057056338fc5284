// The banner under the header says what the console cannot do right now:
// the coordinator unreachable, or writes waiting for a leader.

import { h, mount } from '../dom.js';

let state = { offline: false, leaderless: false, message: '' };

/** banner takes an API event and shows or hides the banner. */
export function banner(ev) {
  if (ev.type === 'offline') state = { ...state, offline: true, message: ev.error.message };
  if (ev.type === 'online') state = { ...state, offline: false };
  if (ev.type === 'leaderless') state = { ...state, leaderless: true, message: ev.message };
  if (ev.type === 'leader') state = { ...state, leaderless: false };
  render();
}

function render() {
  const el = document.getElementById('banner');
  if (state.offline) {
    mount(el, h('p', { class: 'notice warn' }, 'The coordinator is not answering; what you see may be stale. Retrying…'));
  } else if (state.leaderless) {
    mount(el, h('p', { class: 'notice warn' }, 'No leader is known: the console stays readable, and writes wait for a leader. ', h('span', { class: 'muted' }, state.message)));
  } else {
    mount(el);
  }
}
