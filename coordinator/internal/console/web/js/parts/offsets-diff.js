// How positions look in the console: a sink's partition as "topic / n"
// and its offset as a number, a source's partition and offset as JSON
// (pretty-printed when it does not fit on a line), and the diff of an
// offsets change — partition, before, after, unchanged marked — that
// every dry run and every result shows.
//
// Stable hooks: table[data-test=offsets-diff] > tbody > tr[data-change=
// changed|added|removed|unchanged]; p[data-test=diff-summary].

import { h } from '../dom.js';
import { Num, equal, isObject, stringify } from './json.js';

/** sinkPartition says whether a partition is a sink's {kafka_topic, kafka_partition}. */
export function sinkPartition(p) {
  return isObject(p) && 'kafka_topic' in p && 'kafka_partition' in p && Object.keys(p).length === 2;
}

/** partitionText is a partition as a line of text. */
export function partitionText(p) {
  return sinkPartition(p) ? `${p.kafka_topic} / ${p.kafka_partition}` : stringify(p);
}

/** partitionCell shows a partition. */
export function partitionCell(p) {
  return sinkPartition(p) ? h('span', {}, h('span', { class: 'topic' }, String(p.kafka_topic)), ' / ', String(p.kafka_partition))
    : json(p);
}

/** offsetCell shows an offset: "none" for null, a sink's kafka_offset as a number, else JSON. */
export function offsetCell(o) {
  if (o === null || o === undefined) return h('span', { class: 'muted' }, 'none');
  if (isObject(o) && Object.keys(o).length === 1 && o.kafka_offset instanceof Num) {
    const n = Number(o.kafka_offset.text);
    return h('span', { class: 'kafka-offset', title: o.kafka_offset.text }, Number.isSafeInteger(n) ? n.toLocaleString('en-US') : o.kafka_offset.text);
  }
  return json(o);
}

/** json shows a value compactly, or pretty-printed when it is long. */
export function json(v) {
  const line = stringify(v);
  return line.length <= 60 ? h('code', { class: 'json' }, line) : h('pre', { class: 'json' }, stringify(v, 2));
}

/** kind says what a change does: added, removed, unchanged or changed. */
export function kind(ch) {
  if (equal(ch.from, ch.to)) return 'unchanged';
  if (ch.from === null || ch.from === undefined) return 'added';
  if (ch.to === null || ch.to === undefined) return 'removed';
  return 'changed';
}

/** count is the number of partitions a list of changes moves. */
export function moved(changes) {
  return changes.filter(ch => kind(ch) !== 'unchanged').length;
}

const SHOWN = 500;
const WORDS = { changed: 'changes', added: 'gets a position', removed: 'loses its position', unchanged: 'unchanged' };

/**
 * diffTable shows changes [{partition, from, to}]: a summary line and a
 * row per partition, at most 500 (the change covers them all).
 * verb words the summary: "would change" for a dry run, "changed" after.
 */
export function diffTable(changes, verb, caption) {
  const n = moved(changes);
  const same = changes.length - n;
  const summary = changes.length
    ? `${n} partition${n === 1 ? '' : 's'} ${verb}${same ? `; ${same} unchanged` : ''}.`
    : 'No partition is covered: nothing to change.';
  const rows = changes.slice(0, SHOWN).map(ch => {
    const k = kind(ch);
    return h('tr', { 'data-change': k, class: k === 'unchanged' ? 'same' : '' },
      h('th', { scope: 'row', class: 'part' }, partitionCell(ch.partition)),
      h('td', { class: k === 'unchanged' ? '' : 'del' }, offsetCell(ch.from)),
      h('td', { class: k === 'unchanged' ? '' : 'add' }, offsetCell(ch.to)),
      h('td', { class: 'what' }, WORDS[k]));
  });
  return h('div', { class: 'offsets-diff' },
    h('p', { class: 'diff-summary', 'data-test': 'diff-summary' }, summary),
    changes.length ? h('table', { class: 'diff', 'data-test': 'offsets-diff' },
      h('caption', { class: 'sr-only' }, caption || 'Positions before and after'),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, 'Partition'), h('th', { scope: 'col' }, 'Before'),
        h('th', { scope: 'col' }, 'After'), h('th', { scope: 'col' }, 'Change'))),
      h('tbody', {}, rows)) : null,
    changes.length > SHOWN ? h('p', { class: 'muted' }, `${changes.length - SHOWN} more partitions are not shown; the change covers them all.`) : null);
}
