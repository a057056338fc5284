// A config diff: which keys a change adds, removes and changes, as a
// table of key, before and after. Secret values never reach the page as
// text: both sides of a secret key read "[hidden]" (a provider reference
// such as ${file:/s.properties:pw} is no secret and shows as written).

import { h } from '../dom.js';

/** HIDDEN is how a secret value is shown, as the REST API masks it. */
export const HIDDEN = '[hidden]';

/** isReference says whether a value is (or holds) a config provider reference. */
export function isReference(v) {
  return typeof v === 'string' && /\$\{[^}]*\}/.test(v);
}

/** shown is a value as the console may print it. */
export function shown(v, secret) {
  if (v === undefined || v === null) return null;
  return secret && !isReference(v) ? HIDDEN : v;
}

/**
 * configDiff compares two configs (null: none) and returns one row per key
 * that differs, sorted by key: {key, kind: 'added'|'removed'|'changed',
 * before, after}, values as shown(). secret(key) says which keys to mask.
 */
export function configDiff(before, after, secret = () => false) {
  const a = before || {};
  const b = after || {};
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  const rows = [];
  for (const key of keys) {
    const inA = Object.prototype.hasOwnProperty.call(a, key);
    const inB = Object.prototype.hasOwnProperty.call(b, key);
    if (inA && inB && a[key] === b[key]) continue;
    const kind = !inA ? 'added' : !inB ? 'removed' : 'changed';
    const s = secret(key);
    rows.push({ key, kind, before: inA ? shown(a[key], s) : null, after: inB ? shown(b[key], s) : null });
  }
  return rows;
}

/** diffSummary words a diff's size: "2 changed, 1 added". */
export function diffSummary(rows) {
  const n = { changed: 0, added: 0, removed: 0 };
  for (const r of rows) n[r.kind]++;
  const parts = ['changed', 'added', 'removed'].filter(k => n[k]).map(k => `${n[k]} ${k}`);
  return parts.length ? parts.join(', ') : 'no change';
}

/**
 * diffTable renders configDiff's rows: a table with a caption, each row
 * marked added/removed/changed in words as well as colour.
 */
export function diffTable(rows, caption = 'Changes') {
  if (!rows.length) return h('p', { class: 'muted', 'data-test': 'diff-empty' }, 'No key differs.');
  const cell = (v, cls) => v === null ? h('td', { class: 'none' }, h('span', { class: 'muted' }, '—'))
    : h('td', { class: cls }, h('code', { class: 'val' }, v === '' ? '""' : v));
  return h('table', { class: 'diff config-diff', 'data-test': 'config-diff' },
    h('caption', { class: 'sr-only' }, caption),
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, 'Key'), h('th', { scope: 'col' }, 'Change'),
      h('th', { scope: 'col' }, 'Before'), h('th', { scope: 'col' }, 'After'))),
    h('tbody', {}, rows.map(r => h('tr', { class: `d-${r.kind}`, 'data-key': r.key },
      h('th', { scope: 'row' }, h('code', {}, r.key)),
      h('td', {}, h('span', { class: `dk dk-${r.kind}` }, r.kind)),
      cell(r.before, r.kind === 'added' ? 'same' : 'del'),
      cell(r.after, r.kind === 'removed' ? 'same' : 'add')))));
}
