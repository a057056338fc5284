// The offsets tab of a connector's page: its positions per partition (a
// source's partitions and offsets as JSON; a sink's topic, partition,
// offset, end offset and lag), kept live; edit one or many, add a
// partition, reset a sink by rule, reset all — each a dry run, its diff,
// then apply (offsets-change.js); and the offsets history with undo.
//
// renderOffsets(el, ctx, info) mounts it: el the tab's container, ctx the
// page's, info {name, type: 'source'|'sink', state, config}.
//
// Stable hooks for browser tests: section[data-test=offsets];
// table[data-test=positions] > tbody > tr[data-partition=<compact JSON>]
// with input[data-test=pick]; buttons data-test= offsets-edit,
// offsets-edit-all, offsets-add, offsets-dry-run, offsets-cancel-edit,
// offsets-reset-all, offsets-refresh; textarea[data-test=edit-offset],
// textarea[data-test=edit-partition], input[data-test=edit-kafka-offset],
// input[data-test=edit-topic], input[data-test=edit-kafka-partition],
// input[data-test=edit-remove]; p[data-test=offsets-error]. The rule
// form's hooks are in offsets-reset.js, the history's in
// offsets-history.js.

import { h, mount, num, debounce } from '../dom.js';
import * as api from '../api.js';
import * as oapi from './offsets-api.js';
import { Num, parse, stringify, isObject } from './json.js';
import { partitionCell, partitionText, offsetCell, sinkPartition } from './offsets-diff.js';
import { runChange } from './offsets-change.js';
import { resetRuleForm } from './offsets-reset.js';
import { renderHistory } from './offsets-history.js';

// PAGE is how many partitions the table shows at a time.
const PAGE = 200;

/** renderOffsets shows the offsets tab of connector info.name in el. */
export async function renderOffsets(el, ctx, info) {
  const name = info.name;
  const sink = info.type === 'sink';
  const admin = api.can('admin', name);
  let rows = []; // [{partition, offset, lag?}]
  let editing = null; // null, or {rows: [{row|null (a new one), controls}]}
  const picked = new Set();
  let drawn = ''; // what the table shows, to redraw only on a change
  // A connector may have thousands of partitions: the table shows those
  // matching the filter, PAGE at a time.
  let filter = '';
  let limit = PAGE;
  const shown = () => rows.filter(r => !filter || partitionText(r.partition).toLowerCase().includes(filter)).slice(0, limit);
  const matching = () => (filter ? rows.filter(r => partitionText(r.partition).toLowerCase().includes(filter)).length : rows.length);
  const more = h('div', { class: 'toolbar' });
  // The filter is drawn once and only shown or hidden, so typing in it
  // never loses the focus to a redraw.
  const search = h('div', { class: 'toolbar', hidden: true }, h('input', { type: 'search', 'data-test': 'offsets-filter', 'aria-label': 'Filter partitions', placeholder: 'Filter partitions',
    on: { input: debounce(e => { filter = e.target.value.trim().toLowerCase(); limit = PAGE; if (!editing) draw(); }, 200) } }));

  const error = h('p', { class: 'error', role: 'alert', 'data-test': 'offsets-error', hidden: true });
  const note = h('p', { class: 'muted', 'aria-live': 'polite' });
  const toolbar = h('div', { class: 'toolbar', role: 'toolbar', 'aria-label': 'Offsets actions' });
  const table = h('table', { class: 'grid positions', 'data-test': 'positions' });
  const historyEl = h('section', { class: 'offsets-history', 'aria-labelledby': 'offsets-history-title' });
  mount(el, h('section', { class: 'offsets', 'data-test': 'offsets' },
    h('h2', {}, 'Positions'),
    h('p', { class: 'muted' }, sink
      ? `Where ${name} goes on reading: its consumer group's committed offset per topic partition.`
      : `Where ${name} goes on reading: its source partitions and their offsets, as the connector wrote them.`),
    note, error, toolbar, search,
    admin && info.state && info.state !== 'STOPPED' ? h('p', { class: 'muted small' },
      `${name} is ${info.state}: positions change only on a STOPPED connector, so a change stops it first and then puts it back as it was — the dialog shows each step.`) : null,
    table, more,
    sink && admin ? resetRuleForm(info, changed) : null,
    historyEl));

  const history = renderHistory(historyEl, info, changed);

  // gone says whether the tab was shown and no longer is (el may be
  // mounted in the page after this returns).
  let attached = false;
  function gone() {
    if (table.isConnected) attached = true;
    return attached && !table.isConnected;
  }

  async function load() {
    // The page may show another tab in el without leaving: then this one
    // is gone, and so is the need to poll for it.
    if (gone()) return;
    try {
      const [pos, lagged] = await Promise.all([oapi.positions(name), sink ? oapi.lag(name) : null]);
      rows = merge(pos, lagged);
      error.hidden = true;
      note.textContent = `${rows.length} partition${rows.length === 1 ? '' : 's'}${sink && lagged ? `, total lag ${num(lagged.total_lag)}` : ''}. Updated ${new Date().toLocaleTimeString()}.`;
    } catch (e) {
      error.textContent = `The positions could not be read: ${e.message}`;
      error.hidden = false;
    }
    // Redraw only what changed, keeping the focus where it was: the
    // table refreshes every 2 s under a user picking rows by keyboard.
    const sig = stringify(rows.map(r => [r.partition, r.offset, r.lag ? [r.lag.end_offset, r.lag.lag] : null]));
    if (editing || sig === drawn) return;
    drawn = sig;
    const f = document.activeElement;
    const at = f && table.contains(f) ? [f.closest('tr') && f.closest('tr').dataset.partition, f.dataset.test] : null;
    draw();
    if (at) {
      const again = [...table.querySelectorAll(`[data-test="${at[1]}"]`)].find(x => !x.closest('tr') || x.closest('tr').dataset.partition === at[0]);
      if (again) again.focus();
    }
  }

  // changed reloads what a change moved: the positions and the history.
  async function changed() {
    drawn = '';
    await load();
    await history.reload();
  }

  function draw() {
    const head = sink ? ['Topic', 'Partition', 'Offset', 'End offset', 'Lag'] : ['Partition', 'Offset'];
    const visible = shown();
    const pickAll = h('input', { type: 'checkbox', 'aria-label': 'Select every partition shown', 'data-test': 'pick-all', checked: visible.length > 0 && visible.every(r => picked.has(key(r.partition))),
      on: { change: e => { for (const r of visible) { if (e.target.checked) picked.add(key(r.partition)); else picked.delete(key(r.partition)); } draw(); } } });
    mount(table,
      h('caption', { class: 'sr-only' }, `Positions of ${name}`),
      h('thead', {}, h('tr', {}, admin && !editing ? h('th', { scope: 'col', class: 'pick' }, pickAll) : null,
        head.map(c => h('th', { scope: 'col', class: ['Offset', 'End offset', 'Lag', 'Partition'].includes(c) && sink ? 'num' : '' }, c)))),
      h('tbody', {}, editing ? editRows() : visible.length ? visible.map(viewRow)
        : h('tr', {}, h('td', { colspan: head.length + 1, class: 'empty' }, rows.length ? 'No partition matches the filter.'
          : `${name} has no position yet: it starts from the beginning, or where its config says.`))));
    const total = matching();
    search.hidden = !!editing || (rows.length <= PAGE && !filter);
    mount(more, !editing && total > visible.length ? [h('span', { class: 'muted' }, `${visible.length} of ${total} partitions shown.`),
      h('button', { type: 'button', 'data-test': 'offsets-more', on: { click: () => { limit += PAGE; draw(); } } }, `Show ${Math.min(PAGE, total - visible.length)} more`)] : null);
    drawToolbar();
  }

  function viewRow(r) {
    const k = key(r.partition);
    const pick = admin ? h('td', { class: 'pick' }, h('input', { type: 'checkbox', 'data-test': 'pick', checked: picked.has(k), 'aria-label': `Select ${label(r.partition)}`,
      on: { change: e => { if (e.target.checked) picked.add(k); else picked.delete(k); drawToolbar(); } } })) : null;
    if (!sink) return h('tr', { 'data-partition': k }, pick, h('th', { scope: 'row', class: 'part' }, partitionCell(r.partition)), h('td', {}, offsetCell(r.offset)));
    const l = r.lag;
    return h('tr', { 'data-partition': k }, pick,
      h('th', { scope: 'row' }, String(r.partition.kafka_topic)),
      h('td', { class: 'num' }, String(r.partition.kafka_partition)),
      h('td', { class: 'num' }, offsetCell(r.offset)),
      h('td', { class: 'num' }, l ? num(l.end_offset) : '—'),
      h('td', { class: ['num', l && l.lag > 0 ? 'lagging' : ''] }, l ? num(l.lag) : '—'));
  }

  function drawToolbar() {
    if (!admin) {
      mount(toolbar, refreshBtn(), h('span', { class: 'muted' }, 'Changing positions needs the admin role.'));
      return;
    }
    if (editing) {
      mount(toolbar,
        h('button', { type: 'button', class: 'primary', 'data-test': 'offsets-dry-run', on: { click: dryRun } }, 'Dry run…'),
        h('button', { type: 'button', 'data-test': 'offsets-add', on: { click: () => { editing.rows.push(editor(null)); draw(); focusLast(); } } }, 'Add a partition'),
        h('button', { type: 'button', 'data-test': 'offsets-cancel-edit', on: { click: () => { editing = null; drawn = ''; draw(); } } }, 'Cancel'),
        h('span', { class: 'muted' }, 'Nothing is written until you apply the dry run\'s changes.'));
      return;
    }
    const n = rows.filter(r => picked.has(key(r.partition))).length;
    mount(toolbar,
      h('button', { type: 'button', class: 'primary', 'data-test': 'offsets-edit', disabled: !n, on: { click: () => edit(rows.filter(r => picked.has(key(r.partition)))) } },
        n ? `Edit ${n} selected` : 'Edit selected'),
      h('button', { type: 'button', 'data-test': 'offsets-edit-all', disabled: !rows.length, on: { click: () => edit(shown()) } }, rows.length > shown().length ? 'Edit all shown' : 'Edit all'),
      h('button', { type: 'button', 'data-test': 'offsets-add', on: { click: () => { edit([]); editing.rows.push(editor(null)); draw(); focusLast(); } } }, 'Add a partition'),
      h('button', { type: 'button', class: 'danger', 'data-test': 'offsets-reset-all', on: { click: resetAll } }, 'Reset all…'),
      refreshBtn());
  }

  function refreshBtn() {
    return h('button', { type: 'button', 'data-test': 'offsets-refresh', on: { click: changed } }, 'Refresh');
  }

  function edit(list) {
    editing = { rows: list.map(r => editor(r)) };
    draw();
    const first = table.querySelector('textarea, input');
    if (first) first.focus();
  }

  function focusLast() {
    const all = table.querySelectorAll('tbody tr');
    const last = all[all.length - 1];
    const c = last && last.querySelector('textarea, input');
    if (c) c.focus();
  }

  // editor is the controls of one row being edited: row null is a new
  // partition, whose partition is typed too.
  function editor(row) {
    const c = { row };
    const id = Math.random().toString(36).slice(2, 8);
    if (sink) {
      if (!row) {
        c.topic = h('input', { type: 'text', 'data-test': 'edit-topic', 'aria-label': 'Topic', id: `t-${id}` });
        c.part = h('input', { type: 'number', min: 0, step: 1, 'data-test': 'edit-kafka-partition', 'aria-label': 'Partition number', id: `p-${id}` });
      }
      const cur = row && isObject(row.offset) && row.offset.kafka_offset instanceof Num ? row.offset.kafka_offset.text : '';
      c.offset = h('input', { type: 'number', min: 0, step: 1, value: cur, 'data-test': 'edit-kafka-offset', class: 'offset-input',
        'aria-label': row ? `New offset of ${label(row.partition)}` : 'Offset of the new partition', id: `o-${id}`,
        on: { keydown: e => { if (e.key === 'Enter') { e.preventDefault(); dryRun(); } } } });
    } else {
      if (!row) c.part = h('textarea', { rows: 2, spellcheck: 'false', 'data-test': 'edit-partition', 'aria-label': 'Source partition (JSON object)', placeholder: '{"filename": "/data/in.txt"}', id: `p-${id}` });
      c.offset = h('textarea', { rows: 2, spellcheck: 'false', 'data-test': 'edit-offset', 'aria-label': row ? `New offset of ${label(row.partition)} (JSON object)` : 'Offset of the new partition (JSON object)',
        placeholder: '{"position": 0}', id: `o-${id}` });
      c.offset.value = row && row.offset ? stringify(row.offset, 2) : '';
      if (row) c.remove = h('input', { type: 'checkbox', 'data-test': 'edit-remove', on: { change: e => { c.offset.disabled = e.target.checked; } } });
    }
    return c;
  }

  function editRows() {
    return editing.rows.map(c => {
      const err = ctl => [ctl, h('div', { class: 'cell-error error', hidden: true })];
      if (sink) {
        return h('tr', { 'data-partition': c.row ? key(c.row.partition) : 'new' },
          c.row ? h('th', { scope: 'row' }, String(c.row.partition.kafka_topic)) : h('td', {}, err(c.topic)),
          c.row ? h('td', { class: 'num' }, String(c.row.partition.kafka_partition)) : h('td', {}, err(c.part)),
          h('td', { class: 'num' }, err(c.offset), c.row ? h('div', { class: 'muted small' }, 'now ', offsetCell(c.row.offset)) : null),
          h('td', { class: 'num' }, c.row && c.row.lag ? num(c.row.lag.end_offset) : '—'),
          h('td', { class: 'num' }, c.row && c.row.lag ? num(c.row.lag.lag) : '—'));
      }
      return h('tr', { 'data-partition': c.row ? key(c.row.partition) : 'new' },
        c.row ? h('th', { scope: 'row', class: 'part' }, partitionCell(c.row.partition)) : h('td', {}, err(c.part)),
        h('td', {}, err(c.offset),
          c.remove ? h('label', { class: 'inline' }, c.remove, ' Remove this position') : null));
    });
  }

  // collect reads the edited rows into PATCH's offsets, marking each
  // control that does not hold what it should; null when one does not.
  function collect() {
    let ok = true;
    const out = [];
    const bad = (ctl, msg) => {
      ok = false;
      ctl.setAttribute('aria-invalid', 'true');
      const e = ctl.nextElementSibling;
      if (e) { e.textContent = msg; e.hidden = false; ctl.setAttribute('aria-describedby', e.id || (e.id = `err-${ctl.id}`)); }
    };
    const good = ctl => { ctl.removeAttribute('aria-invalid'); const e = ctl.nextElementSibling; if (e) e.hidden = true; };
    for (const c of editing.rows) {
      for (const ctl of [c.topic, c.part, c.offset]) if (ctl) good(ctl);
      let partition = c.row && c.row.partition;
      let offset;
      if (sink) {
        if (!c.row) {
          const t = c.topic.value.trim();
          if (!t) bad(c.topic, 'Name the topic.');
          if (!/^\d+$/.test(c.part.value)) bad(c.part, 'A partition number, 0 or more.');
          partition = { kafka_topic: t, kafka_partition: new Num(c.part.value) };
        }
        if (!/^\d+$/.test(c.offset.value)) { bad(c.offset, 'An offset, 0 or more.'); continue; }
        offset = { kafka_offset: new Num(String(BigInt(c.offset.value))) };
      } else {
        if (!c.row) partition = objectOf(c.part, bad);
        offset = c.remove && c.remove.checked ? null : objectOf(c.offset, bad);
        if (offset === undefined || partition === undefined) continue;
      }
      out.push({ partition, offset });
    }
    if (ok && !out.length) return null;
    return ok ? out : null;
  }

  async function dryRun() {
    const offsets = collect();
    if (!offsets) {
      const first = table.querySelector('[aria-invalid=true]');
      if (first) first.focus();
      return;
    }
    const res = await runChange(name, {
      flow: 'alter-offsets',
      title: `Change ${offsets.length} position${offsets.length === 1 ? '' : 's'} of ${name}`,
      intro: sink ? pastEnd(offsets) : null,
      preview: () => oapi.previewAlter(name, offsets),
      apply: reason => oapi.alter(name, offsets, reason),
    });
    if (res.applied) { editing = null; picked.clear(); }
    await changed();
    refocus();
  }

  // refocus puts the focus back on the tab after a dialog: the button
  // that opened it may be gone with the edit it belonged to.
  function refocus() {
    if (el.contains(document.activeElement)) return;
    const b = toolbar.querySelector('button:not([disabled])');
    if (b) b.focus();
  }

  // pastEnd warns of sink offsets beyond their partition's end offset,
  // which Kafka Connect's PATCH accepts as they are: the sink's consumer
  // finds no record there and falls back to its auto.offset.reset.
  function pastEnd(offsets) {
    const ends = new Map(rows.filter(r => r.lag).map(r => [key(r.partition), r.lag.end_offset]));
    const past = offsets.filter(o => ends.has(key(o.partition)) && Number(o.offset.kafka_offset.text) > ends.get(key(o.partition)));
    if (!past.length) return null;
    return h('div', { class: 'notice warn', 'data-test': 'past-end' },
      h('p', {}, 'Past the end of the partition: when the sink resumes, its consumer finds no record there and falls back to its auto.offset.reset policy.'),
      h('ul', {}, past.map(o => h('li', {}, `${label(o.partition)}: ${num(Number(o.offset.kafka_offset.text))}, its end offset is ${num(ends.get(key(o.partition)))}`))));
  }

  async function resetAll() {
    await runChange(name, {
      flow: 'reset-offsets',
      title: `Reset every position of ${name}`,
      intro: h('p', { class: 'notice warn' }, sink
        ? `Every committed offset of ${name}'s consumer group goes (the group is deleted): it starts again where its consumer config says (auto.offset.reset).`
        : `Every source offset of ${name} goes: it starts again from the beginning of its sources.`),
      preview: () => oapi.previewReset(name),
      apply: reason => oapi.resetAll(name, reason),
      applyLabel: 'Reset all positions',
      confirmWord: name,
    });
    await changed();
    refocus();
  }

  // The history's first page is loading already; poll it from 10 s on.
  let polled = false;
  ctx.every(10000, () => (polled && !gone() ? history.poll() : (polled = true)));
  await ctx.every(2000, load);
}

// objectOf reads a control's JSON object (exact numbers), marking it bad
// when it is not one; undefined then.
function objectOf(ctl, bad) {
  const text = ctl.value.trim();
  if (!text) { bad(ctl, 'Give a JSON object.'); return undefined; }
  try {
    const v = parse(text);
    if (!isObject(v)) { bad(ctl, 'It must be a JSON object: {…}.'); return undefined; }
    return v;
  } catch (e) {
    bad(ctl, e.message);
    return undefined;
  }
}

// merge puts a sink's lag beside its positions, adding the partitions it
// consumes where its group has committed nothing yet.
function merge(positions, lagged) {
  const rows = positions.map(p => ({ partition: p.partition, offset: p.offset }));
  if (!lagged || !lagged.partitions) return rows;
  const byKey = new Map(rows.map(r => [sinkPartition(r.partition) ? `${r.partition.kafka_topic}\u0000${r.partition.kafka_partition}` : '', r]));
  for (const l of lagged.partitions) {
    const k = `${l.topic}\u0000${l.partition}`;
    const r = byKey.get(k);
    if (r) r.lag = l;
    else rows.push({ partition: { kafka_topic: l.topic, kafka_partition: new Num(String(l.partition)) }, offset: null, lag: l });
  }
  rows.sort((a, b) => String(a.partition.kafka_topic).localeCompare(String(b.partition.kafka_topic)) || Number(String(a.partition.kafka_partition)) - Number(String(b.partition.kafka_partition)));
  return rows;
}

function key(p) { return stringify(p); }

function label(p) {
  return sinkPartition(p) ? `partition ${p.kafka_partition} of ${p.kafka_topic}` : `partition ${stringify(p)}`;
}
