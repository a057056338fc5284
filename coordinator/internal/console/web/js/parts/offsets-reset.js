// A sink's reset by rule (POST /sluice/connectors/{name}/offsets/reset,
// docs/offsets.md): earliest, latest, a time, an offset or a shift by N
// records, for all its topics or some topics and partitions; a dry run
// and its diff first, as every change (offsets-change.js). The values are
// the server's to judge: its message is shown beside the form.
//
// Stable hooks: details[data-test=reset-rule]; select[data-test=rule];
// input[data-test=rule-time], rule-offset, rule-shift, rule-topics,
// rule-partitions; button[data-test=rule-dry-run]; p[data-test=rule-error].

import { h, field } from '../dom.js';
import * as oapi from './offsets-api.js';
import { runChange } from './offsets-change.js';

const RULES = [
  ['earliest', 'Earliest: all the broker still has'],
  ['latest', 'Latest: only what arrives from now on'],
  ['timestamp', 'A time: the first record at or after it'],
  ['offset', 'An offset, in every partition (clamped)'],
  ['shift', 'Shift by N records (negative: back)'],
];

/** resetRuleForm is the form that resets sink connector info.name by rule; done() runs after a change. */
export function resetRuleForm(info, done) {
  const name = info.name;
  const rule = h('select', { 'data-test': 'rule', on: { change: show } }, RULES.map(([v, l]) => h('option', { value: v }, l)));
  const time = h('input', { type: 'datetime-local', step: 1, 'data-test': 'rule-time' });
  const offset = h('input', { type: 'number', min: 0, step: 1, 'data-test': 'rule-offset' });
  const shift = h('input', { type: 'number', step: 1, 'data-test': 'rule-shift', placeholder: '-1000' });
  const topics = h('input', { type: 'text', 'data-test': 'rule-topics', placeholder: 'all the connector\'s topics' });
  const partitions = h('input', { type: 'text', 'data-test': 'rule-partitions', placeholder: 'all', inputmode: 'numeric' });
  const error = h('p', { class: 'error', role: 'alert', 'data-test': 'rule-error', hidden: true });
  const timeField = field('Time (your browser\'s time zone)', time, `Sent as UTC. Your time zone is ${Intl.DateTimeFormat().resolvedOptions().timeZone}.`);
  const offsetField = field('Offset', offset);
  const shiftField = field('Records to shift by', shift, 'A partition with no committed offset cannot be shifted.');

  function show() {
    timeField.hidden = rule.value !== 'timestamp';
    offsetField.hidden = rule.value !== 'offset';
    shiftField.hidden = rule.value !== 'shift';
  }
  show();

  // body builds the request's rule from the form, or says what is missing.
  function body() {
    const b = {};
    switch (rule.value) {
      case 'timestamp': {
        if (!time.value) throw new Error('Pick the time to reset to.');
        const t = new Date(time.value);
        if (isNaN(t)) throw new Error(`"${time.value}" is not a time.`);
        b.to = 'timestamp';
        b.timestamp = t.toISOString();
        break;
      }
      case 'offset':
        if (!/^\d+$/.test(offset.value)) throw new Error('Give an offset: a whole number, 0 or more.');
        b.to = 'offset';
        b.offset = Number(offset.value);
        break;
      case 'shift':
        if (!/^-?\d+$/.test(shift.value)) throw new Error('Give the number of records to shift by: a whole number, negative to go back.');
        b.shift_by = Number(shift.value);
        break;
      default:
        b.to = rule.value;
    }
    const ts = topics.value.split(',').map(s => s.trim()).filter(Boolean);
    if (ts.length) b.topics = ts;
    const ps = partitions.value.split(',').map(s => s.trim()).filter(Boolean);
    if (ps.length) {
      const bad = ps.find(p => !/^\d+$/.test(p));
      if (bad !== undefined) throw new Error(`"${bad}" is not a partition number.`);
      b.partitions = ps.map(Number);
    }
    return b;
  }

  async function dryRun(e) {
    e.preventDefault();
    let rb;
    try {
      rb = body();
      error.hidden = true;
    } catch (err) {
      error.textContent = err.message;
      error.hidden = false;
      return;
    }
    const words = rb.to === 'timestamp' ? `to ${rb.timestamp}` : rb.to ? `to ${rb.to === 'offset' ? `offset ${rb.offset}` : rb.to}` : `by ${rb.shift_by} records`;
    const res = await runChange(name, {
      flow: 'reset-rule',
      title: `Reset ${name} ${words}`,
      preview: () => oapi.resetTo(name, rb, true),
      apply: reason => oapi.resetTo(name, rb, false, reason),
    });
    if (res.applied) form.closest('details').open = false;
    done();
  }

  const form = h('form', { class: 'rule-form', on: { submit: dryRun } },
    h('div', { class: 'rule-grid' },
      field('Rule', rule), timeField, offsetField, shiftField,
      field('Topics (comma separated)', topics, 'Only these of its topics; empty: all.'),
      field('Partitions (comma separated)', partitions, 'Only these partition numbers, in every topic covered; empty: all.')),
    error,
    h('button', { type: 'submit', class: 'primary', 'data-test': 'rule-dry-run' }, 'Dry run…'));
  return h('details', { class: 'card rule', 'data-test': 'reset-rule' },
    h('summary', {}, 'Reset by rule: earliest, latest, a time, an offset, or shift by N'), form);
}
