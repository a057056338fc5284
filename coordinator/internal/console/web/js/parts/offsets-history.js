// The offsets history of a connector (GET /sluice/connectors/{name}/
// offsets/history): who changed its positions, when, why and how, each
// entry's before and after per partition, and Undo — a dry run of the
// undo and its diff first, then the undo (offsets-change.js). An undo the
// API refuses because positions moved since (409) offers to force it.
// Restore brings back positions another entry recorded, a deleted
// connector's too.
//
// Stable hooks: table[data-test=history] > tbody > tr[data-entry=<id>];
// buttons data-test= history-details, history-undo, history-older,
// history-refresh, history-restore (offsets-restore.js);
// tr[data-test=history-changes].

import { h, mount, ago, when } from '../dom.js';
import * as api from '../api.js';
import * as oapi from './offsets-api.js';
import { diffTable, moved } from './offsets-diff.js';
import { runChange } from './offsets-change.js';
import { restoreFlow } from './offsets-restore.js';

const OPERATIONS = {
  alter: 'edited', reset: 'reset all', 'reset-to': 'reset by rule', create: 'created at positions',
  undo: 'undo', restore: 'restored', move: 'moved',
};

/**
 * renderHistory shows connector info.name's offsets history in el;
 * changed() runs after an undo. It returns {reload, poll}: poll adds
 * entries made since (by anyone), keeping what the user has open.
 */
export function renderHistory(el, info, changed) {
  const name = info.name;
  const admin = api.can('admin', name);
  let entries = [];
  let more = false;
  const open = new Set();
  const tbody = h('tbody');
  const status = h('p', { class: 'muted', 'aria-live': 'polite' });
  const error = h('p', { class: 'error', role: 'alert', hidden: true });
  const older = h('button', { type: 'button', 'data-test': 'history-older', hidden: true, on: { click: () => page(entries.length ? entries[entries.length - 1].id : '') } }, 'Show older entries');

  mount(el,
    h('div', { class: 'section-head' },
      h('h2', { id: 'offsets-history-title' }, 'Offsets history'),
      h('button', { type: 'button', 'data-test': 'history-refresh', on: { click: () => reload() } }, 'Refresh'),
      admin ? h('button', { type: 'button', 'data-test': 'history-restore', on: { click: restore } }, 'Restore recorded positions…') : null),
    h('p', { class: 'muted' }, 'Every change of these positions, newest first: who made it, when and why, and each partition before and after.'),
    error,
    h('table', { class: 'grid history', 'data-test': 'history' },
      h('caption', { class: 'sr-only' }, `Offsets history of ${name}`),
      h('thead', {}, h('tr', {}, ['When', 'Change', 'Who', 'Why', 'Partitions', 'Actions'].map(c => h('th', { scope: 'col' }, c)))),
      tbody),
    status, older);

  async function page(before) {
    try {
      const res = await oapi.history(name, before);
      const got = (res && res.entries) || [];
      entries = before ? entries.concat(got) : got;
      more = !!(res && res.more);
      error.hidden = true;
    } catch (e) {
      error.textContent = `The offsets history could not be read: ${e.message}`;
      error.hidden = false;
    }
    draw();
  }

  // poll reloads the newest page and redraws only when an entry came or
  // went, so a user reading an older page or an entry's partitions keeps
  // them, and the focus stays where it is.
  async function poll() {
    let res;
    try {
      res = await oapi.history(name, '');
    } catch {
      return; // the next poll, or Refresh, says what is wrong
    }
    const got = (res && res.entries) || [];
    if (!got.length || got[0].id === (entries[0] && entries[0].id)) return;
    const known = new Set(entries.map(e => e.id));
    entries = got.filter(e => !known.has(e.id)).concat(entries);
    const f = document.activeElement;
    const at = f && el.contains(f) ? [f.closest('tr') && f.closest('tr').dataset.entry, f.dataset.test] : null;
    draw();
    if (at) {
      const again = el.querySelector(`tr[data-entry="${CSS.escape(at[0] || '')}"] [data-test="${at[1]}"]`);
      if (again) again.focus();
    }
  }

  function draw() {
    mount(tbody, entries.length ? entries.flatMap(row)
      : h('tr', {}, h('td', { colspan: 6, class: 'empty' }, 'No change of these positions is recorded.')));
    older.hidden = !more;
    status.textContent = entries.length ? `${entries.length} entr${entries.length === 1 ? 'y' : 'ies'} shown${more ? '; older ones exist' : ''}.` : '';
  }

  function row(e) {
    const isOpen = open.has(e.id);
    const detailsId = `hist-${e.id}`;
    const n = moved(e.changes || []);
    const toggle = h('button', { type: 'button', class: 'link', 'data-test': 'history-details', 'aria-expanded': String(isOpen), 'aria-controls': detailsId,
      on: { click: () => { if (isOpen) open.delete(e.id); else open.add(e.id); draw(); tbody.querySelector(`tr[data-entry="${CSS.escape(e.id)}"] [data-test=history-details]`).focus(); } } },
    isOpen ? 'Hide partitions' : 'Before / after');
    const undo = admin ? h('button', { type: 'button', 'data-test': 'history-undo', on: { click: () => undoEntry(e) } }, 'Undo…') : null;
    const main = h('tr', { 'data-entry': e.id },
      h('td', {}, when(e.time), h('div', { class: 'muted small' }, ago(e.time))),
      h('th', { scope: 'row' }, OPERATIONS[e.operation] || e.operation, e.detail ? h('div', { class: 'muted small' }, e.detail) : null,
        e.undoes ? h('div', { class: 'muted small' }, 'undoes ', h('code', {}, e.undoes)) : null),
      h('td', {}, e.principal || '—'),
      h('td', { class: 'why' }, e.reason || h('span', { class: 'muted' }, '—')),
      h('td', { class: 'num' }, `${n} of ${(e.changes || []).length}`),
      h('td', { class: 'row-actions' }, toggle, undo));
    if (!isOpen) return [main];
    return [main, h('tr', { id: detailsId, class: 'history-changes', 'data-test': 'history-changes' },
      h('td', { colspan: 6 },
        h('p', { class: 'muted small' }, 'Entry ', h('code', {}, e.id), e.group ? ` · group ${e.group}` : '', e.offsets_topic ? ` · offsets topic ${e.offsets_topic}` : '',
          e.from_entry ? ` · positions from ${e.from_entry}` : ''),
        diffTable(e.changes || [], 'changed', `Positions before and after entry ${e.id}`)))];
  }

  async function undoEntry(e) {
    const res = await runChange(name, {
      flow: 'undo-offsets',
      title: `Undo the change of ${new Date(e.time).toLocaleString()}`,
      intro: h('p', {}, `This puts back the positions ${name} had before entry `, h('code', {}, e.id),
        ` (${OPERATIONS[e.operation] || e.operation} by ${e.principal || 'someone'}${e.reason ? `: "${e.reason}"` : ''}). The undo is recorded as an entry of its own, so it can be undone in turn.`),
      preview: ({ force }) => oapi.undo(name, e.id, { dryRun: true, force }),
      apply: (reason, { force }) => oapi.undo(name, e.id, { force }, reason),
      applyLabel: 'Undo',
      forceable: true,
    });
    if (res.applied) await changed();
  }

  async function restore() {
    const res = await restoreFlow(info);
    if (res && res.applied) await changed();
  }

  async function reload() { await page(''); }

  reload();
  return { reload, poll };
}
