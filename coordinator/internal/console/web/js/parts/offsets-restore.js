// Restore recorded positions (POST /sluice/connectors/{name}/offsets/
// restore, docs/offsets.md "Undo and restore"): the positions one entry of
// a connector's offsets history recorded — this connector's, or another's,
// a deleted one's too (its history outlives it) — written to this one. The
// user picks the connector, the entry and whether to take the positions
// from before or after it; then the change runs as every other: dry run
// → diff → apply (offsets-change.js).
//
// Stable hooks: dialog[data-test=restore-form] with input[data-test=
// restore-from], select[data-test=restore-entry], select[data-test=
// restore-positions], p[data-test=restore-error].

import { h, field, debounce } from '../dom.js';
import * as oapi from './offsets-api.js';
import { dialog } from './modal.js';
import { runChange } from './offsets-change.js';

/** restoreFlow asks what to restore into connector info.name, then runs it; it resolves with runChange's result, or null. */
export async function restoreFlow(info) {
  const name = info.name;
  const from = h('input', { type: 'text', value: name, 'data-test': 'restore-from', spellcheck: 'false', autocomplete: 'off' });
  const entry = h('select', { 'data-test': 'restore-entry' });
  const positions = h('select', { 'data-test': 'restore-positions' },
    h('option', { value: 'before' }, 'Before the entry: what it changed from (for a reset or a delete, the positions it removed)'),
    h('option', { value: 'after' }, 'After the entry: what it changed to'));
  const error = h('p', { class: 'error', role: 'alert', 'data-test': 'restore-error', hidden: true });

  // entries lists the history of the connector named in from, newest
  // first; the newest is the default, as the API's.
  async function entries() {
    const who = from.value.trim();
    entry.replaceChildren(h('option', { value: '' }, 'Its newest entry'));
    error.hidden = true;
    if (!who) return;
    try {
      const page = await oapi.history(who);
      for (const e of (page && page.entries) || []) {
        entry.append(h('option', { value: e.id }, `${new Date(e.time).toLocaleString()} · ${e.operation}${e.detail ? ` (${e.detail})` : ''} · ${e.principal}${e.reason ? ` · ${e.reason}` : ''}`));
      }
      if (!page || !page.entries || !page.entries.length) throw new Error(`No offsets history is recorded for ${who}.`);
    } catch (e) {
      error.textContent = e.message;
      error.hidden = false;
    }
  }
  from.addEventListener('input', debounce(entries, 300));
  entries();

  const go = await dialog(`Restore recorded positions into ${name}`, h('div', { 'data-test': 'restore-form' },
    h('p', {}, `Writes the positions an offsets history entry recorded into ${name}. The history outlives its connector: a deleted connector's positions can be brought back into a new one of the same kind.`),
    field('From the history of connector', from),
    field('Entry', entry),
    field('Positions', positions),
    error,
    h('p', { class: 'muted' }, 'Next: a dry run shows each partition before and after; nothing is written until you apply it.')),
  [{ label: 'Cancel', value: false }, { label: 'Dry run…', value: true, kind: 'primary' }]);
  if (!go) return null;
  const body = { from: from.value.trim(), positions: positions.value };
  if (entry.value) body.entry = entry.value;
  return runChange(name, {
    flow: 'restore-offsets',
    title: `Restore positions of ${body.from} into ${name}`,
    intro: h('p', {}, `The positions ${body.positions} ${body.entry ? `entry ${body.entry}` : 'the newest entry'} of ${body.from}'s offsets history.`),
    preview: () => oapi.restore(name, body, true),
    apply: reason => oapi.restore(name, body, false, reason),
    applyLabel: 'Restore',
  });
}
