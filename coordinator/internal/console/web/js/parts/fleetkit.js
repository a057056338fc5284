// Small pieces the fleet pages (agents, rollouts, maintenance, audit)
// share: an inline place for an action's outcome, a progress bar with its
// words, a config diff, redraws that keep the focus, and the words for an
// endpoint this coordinator does not have.

import { h, mount, ago } from '../dom.js';

/**
 * outcome is an inline, live region next to the controls it reports on:
 * ok(text) and fail(text) show a result, clear() hides it. Screen readers
 * hear each change (role=status; role=alert for failures).
 */
export function outcome(id) {
  const el = h('p', { id, class: 'outcome', role: 'status', 'aria-live': 'polite', hidden: true });
  const show = (cls, text) => { el.className = `outcome ${cls}`; el.textContent = text; el.hidden = !text; };
  const o = {
    el,
    ok: text => { el.setAttribute('role', 'status'); show('ok', text); },
    fail: text => { el.setAttribute('role', 'alert'); show('error', text); },
    clear: () => show('', ''),
    // handlers are what an action reports to: its result shown and
    // focused (the button pressed may be gone once the page redraws),
    // then after() to redraw.
    handlers: after => ({
      done: m => { o.ok(m); focusFirst(el); },
      fail: m => { o.fail(m); focusFirst(el); },
      after,
    }),
  };
  return o;
}

/** bar is a labelled progress bar: done of total, and the words beside it. */
export function bar(done, total, words, label) {
  const max = Math.max(total, 1);
  return h('div', { class: 'fk-bar' },
    h('progress', { max, value: Math.min(done, max), 'aria-label': label || words }),
    h('span', { class: 'fk-bar-words' }, words));
}

/**
 * missing words an error for a page whose endpoint this coordinator does
 * not have (an older version): a 404 whose message is not about the thing
 * asked for.
 */
export function missing(e, what) {
  // An unknown route answers "HTTP 404 Not Found" (or no body at all);
  // a known one names what it did not find.
  return e && e.status === 404 && /^(HTTP 404|GET |POST |PUT |DELETE )/.test(e.message)
    ? `This coordinator does not have ${what}.` : e.message;
}

/** pageError shows a page that could not load, with why. */
export function pageError(root, title, message) {
  mount(root, h('h1', {}, title), h('p', { class: 'error', role: 'alert' }, message));
}

/** plural words a count of a noun: "1 task", "3 tasks". */
export function plural(n, noun, many) {
  return `${n} ${n === 1 ? noun : (many || `${noun}s`)}`;
}

/** focusFirst moves focus to el (a heading gets tabindex -1 for it). */
export function focusFirst(el) {
  if (!el) return;
  if (!el.hasAttribute('tabindex') && !/^(A|BUTTON|INPUT|SELECT|TEXTAREA)$/.test(el.tagName)) el.setAttribute('tabindex', '-1');
  el.focus();
}

/** configDiff lists the keys two configs differ in: [{key, from, to}], by key. */
export function configDiff(before, after) {
  const keys = [...new Set([...Object.keys(before || {}), ...Object.keys(after || {})])].sort();
  return keys.filter(k => (before || {})[k] !== (after || {})[k]).map(k => ({ key: k, from: (before || {})[k], to: (after || {})[k] }));
}

/** diffTable shows configDiff's rows: removed, changed and added keys. */
export function diffTable(rows, caption) {
  return h('table', { class: 'diff' },
    caption ? h('caption', { class: 'sr-only' }, caption) : null,
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Key'), h('th', { scope: 'col' }, 'Before'), h('th', { scope: 'col' }, 'After'))),
    h('tbody', {}, rows.length ? rows.map(r => h('tr', {},
      h('th', { scope: 'row' }, r.key),
      h('td', { class: r.from === undefined ? 'same' : 'del' }, r.from === undefined ? '(not set)' : r.from),
      h('td', { class: r.to === undefined ? 'same' : 'add' }, r.to === undefined ? '(removed)' : r.to)))
      : h('tr', {}, h('td', { colspan: 3, class: 'same' }, 'No change.'))));
}

/**
 * remount replaces el's children with build()'s only when key changed
 * since the last call: a page that polls every 2 s keeps the focus, the
 * scroll and an open <details> while nothing it shows has changed.
 */
export function remount(el, key, build) {
  if (el.fkKey === key) return false;
  el.fkKey = key;
  mount(el, build());
  return true;
}

/**
 * roughAgo words a time as ago does, but to the minute ("under a minute
 * ago"): a list keyed on it is drawn again only when what it shows
 * changes, so a focused button in it stays focused.
 */
export function roughAgo(t) {
  if (!t) return '—';
  return Date.now() - new Date(t).getTime() < 60000 ? 'under a minute ago' : ago(t);
}
