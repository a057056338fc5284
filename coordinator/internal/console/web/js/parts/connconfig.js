// The config tab of a connector's page: the validate-driven form and its
// JSON view, "Review changes" (a diff of key, before and after) then Apply
// (PUT /connectors/{name}/config) with its result; and the config history
// with a one-click restore, confirmed with the diff it would make.
//
// Stable hooks: [data-action=review], [data-action=discard],
// #cfg-dirty (live count of changes), #cfg-result (live result),
// #cfg-error (alert), #cfg-changed-elsewhere, #cfg-history-toggle (the
// folded history's summary), #cfg-history (table; rows [data-entry=<id>],
// buttons [data-action=restore]), #cfg-history-note,
// the dialog's [data-test=config-diff] table; the form's controls
// #cfg-<key> and [data-key="<key>"].

import { h, mount, when, ago } from '../dom.js';
import * as api from '../api.js';
import { setGuard } from '../router.js';
import { dialog } from './modal.js';
import { configForm } from './configform.js';
import { configDiff, diffTable, diffSummary, HIDDEN } from './diff.js';

/** renderConfig fills el with the config tab of info's connector. */
export async function renderConfig(el, ctx, info) {
  const name = info.name;
  const path = `/connectors/${api.enc(name)}/config`;
  const editable = api.can('operator', name);
  let current = await api.call('GET', path);
  if (!ctx.live()) return;
  info.config = current;

  const form = configForm({ config: current, editable, prefix: 'cfg', readonly: ['name'], errorsOf: 'all', onChange: dirtyChanged });
  const dirtyBox = h('span', { id: 'cfg-dirty', class: 'muted', 'aria-live': 'polite' });
  const review = h('button', { type: 'button', class: 'primary', 'data-action': 'review', disabled: true, on: { click: doReview } }, 'Review changes…');
  const discard = h('button', { type: 'button', 'data-action': 'discard', disabled: true, on: { click: () => { form.discard(); result.textContent = 'Changes discarded.'; } } }, 'Discard changes');
  const result = h('p', { id: 'cfg-result', class: 'cfg-result', role: 'status', 'aria-live': 'polite', tabindex: '-1' });
  const failure = h('p', { id: 'cfg-error', class: 'error', role: 'alert', tabindex: '-1', hidden: true });
  const elsewhere = h('p', { id: 'cfg-changed-elsewhere', class: 'notice warn', hidden: true });
  // The history sits above the form, folded: a line says how many
  // changes and the last one; opening it shows the list.
  const historyLine = h('span', { class: 'muted small', id: 'cfg-history-line' });
  const historyBody = h('div');
  const historyBox = h('details', { class: 'cfg-history card', id: 'cfg-history-box' },
    h('summary', { id: 'cfg-history-toggle' }, h('h2', { id: 'cfg-history-h' }, 'Config history'), ' ', historyLine), historyBody);

  mount(el,
    elsewhere,
    editable ? h('div', { class: 'toolbar cfg-bar' }, review, discard, dirtyBox) : null,
    result, failure,
    historyBox,
    form.el);

  function dirtyChanged() {
    const n = form.diff().length;
    review.disabled = n === 0;
    discard.disabled = n === 0;
    dirtyBox.textContent = n ? `${n} key${n === 1 ? '' : 's'} changed, not applied` : '';
  }
  setGuard(() => !form.dirty() || window.confirm(`Leave ${name}'s config with changes not applied?`));
  ctx.onLeave(() => setGuard(null));

  async function doReview() {
    failure.hidden = true;
    result.textContent = 'Checking the config…';
    const r = await form.validateNow();
    if (!r) { result.textContent = ''; failure.textContent = 'The config could not be checked: see the message above the form.'; failure.hidden = false; return; }
    if (r.error_count > 0) {
      result.textContent = '';
      form.showAllErrors();
      failure.textContent = `Fix the config's ${r.error_count} error${r.error_count === 1 ? '' : 's'} before applying it: each is shown on its field.`;
      failure.hidden = false;
      if (!form.focusFirstError()) failure.focus();
      return;
    }
    result.textContent = '';
    // Someone may have changed it since this page read it: say so, as
    // applying replaces the whole config.
    let server = current;
    try { server = await api.call('GET', path); } catch { /* the PUT answers for itself */ }
    const theirs = configDiff(current, server, form.secret);
    const rows = form.diff();
    const body = h('div', {},
      theirs.length ? h('div', { class: 'notice warn' }, `The config changed since this page read it (${diffSummary(theirs)}): applying replaces that change.`) : null,
      h('p', {}, `${diffSummary(rows)}. Its tasks restart with the new config.`),
      diffTable(rows, `Changes to ${name}'s config`));
    const go = await dialog(`Apply these changes to ${name}?`, body, [{ label: 'Cancel', value: false }, { label: 'Apply', value: true, kind: 'primary' }]);
    if (!go) { review.focus(); return; }
    await apply(rows);
  }

  async function apply(rows) {
    result.textContent = 'Applying…';
    try {
      const out = await api.call('PUT', path, form.config());
      current = (out && out.config) || form.config();
      info.config = current;
      form.reset(current);
      mount(result, h('span', { class: 'ok' }, `✓ Applied: ${diffSummary(rows)} (${rows.map(r => r.key).join(', ')}).`), ' Its tasks restart with the new config.');
      elsewhere.hidden = true;
      loadHistory();
      result.focus();
    } catch (e) {
      result.textContent = '';
      failure.textContent = `Apply failed: ${e.message}`;
      failure.hidden = false;
      failure.focus();
    }
  }

  // History: newest first, a page at a time.
  let entries = [];
  let more = false;
  let missing = false;
  let historySig = '';
  const secretOf = key => form.secret(key);

  async function loadHistory(older) {
    if (missing) return;
    try {
      const q = older && entries.length ? `?before=${api.enc(entries[entries.length - 1].id)}` : '';
      const r = await api.call('GET', `/sluice/connectors/${api.enc(name)}/config/history${q}`);
      if (!ctx.live()) return;
      const got = r.entries || [];
      if (older) {
        entries = entries.concat(got);
        more = !!r.more;
      } else {
        // A poll reads the newest page: keep the older pages the user
        // loaded (ids sort by time).
        const known = new Set(got.map(e => e.id));
        const oldest = got.length ? got[got.length - 1].id : '';
        const kept = entries.filter(e => !known.has(e.id) && e.id < oldest);
        entries = got.concat(kept);
        if (!kept.length) more = !!r.more;
      }
      const sig = JSON.stringify(entries.map(e => e.id)) + more;
      if (sig !== historySig) { historySig = sig; drawHistory(); }
      sayHistory(); // "the last 2 min ago" moves on between changes
    } catch (e) {
      if (!ctx.live()) return;
      if (e.status === 404 && !/^Connector /.test(e.message)) {
        missing = true;
        historyLine.textContent = 'not on this coordinator';
        mount(historyBody, h('p', { class: 'notice', id: 'cfg-history-note' }, 'This coordinator does not have a config history (GET …/config/history answered 404): it needs a newer Sluice.'));
      } else {
        historyLine.textContent = 'could not be read';
        mount(historyBody, h('p', { class: 'error', id: 'cfg-history-note' }, `The config history could not be read: ${e.message}`));
      }
    }
  }

  function drawHistory() {
    const canRestore = api.can('operator', name);
    mount(historyBody,
      h('table', { class: 'grid', id: 'cfg-history' },
        h('caption', { class: 'sr-only' }, `Changes of ${name}'s config, newest first`),
        h('thead', {}, h('tr', {}, ['Time', 'Principal', 'Operation', 'Keys', ''].map((c, i) => h('th', { scope: 'col' }, i === 4 ? h('span', { class: 'sr-only' }, 'Actions') : c)))),
        h('tbody', {}, entries.length ? entries.map(e => h('tr', { 'data-entry': e.id },
          h('td', {}, when(e.time)),
          h('td', {}, e.principal || '—'),
          h('td', {}, h('code', {}, e.operation), e.detail ? h('div', { class: 'muted small' }, e.detail) : null),
          h('td', {}, keys(e.diff)),
          h('td', {}, canRestore && e.operation !== 'delete' ? h('button', { type: 'button', 'data-action': 'restore', 'aria-label': `Restore the config of ${new Date(e.time).toLocaleString()}`,
            on: { click: () => restore(e) } }, 'Restore…') : null)))
          : h('tr', {}, h('td', { colspan: 5, class: 'empty' }, 'No change recorded yet.')))),
      more ? h('button', { type: 'button', class: 'link', 'data-action': 'older', on: { click: () => loadHistory(true) } }, 'Show older changes') : null);
  }

  function sayHistory() {
    const last = entries[0];
    historyLine.textContent = last ? `${entries.length}${more ? '+' : ''} change${entries.length === 1 ? '' : 's'}; the last ${ago(last.time)} by ${last.principal || 'someone'} (${last.operation})` : 'no change recorded yet';
  }

  async function restore(entry) {
    failure.hidden = true;
    let full;
    let server;
    try {
      [full, server] = await Promise.all([
        api.call('GET', `/sluice/connectors/${api.enc(name)}/config/history/${api.enc(entry.id)}`),
        api.call('GET', path),
      ]);
    } catch (e) {
      failure.textContent = `The entry could not be read: ${e.message}`;
      failure.hidden = false;
      failure.focus();
      return;
    }
    if (!full.after) {
      failure.textContent = full.omitted ? 'This entry\'s config was too large to record: it cannot be restored.' : 'This entry has no config to restore.';
      failure.hidden = false;
      failure.focus();
      return;
    }
    // The restore writes the entry's config; a secret the history hides
    // keeps the connector's current value.
    const target = { ...full.after };
    const hidden = new Set(full.hidden || []);
    for (const k of hidden) if (target[k] === HIDDEN && k in server) target[k] = server[k];
    const rows = configDiff(server, target, k => secretOf(k) || hidden.has(k));
    const body = h('div', {},
      h('p', {}, `Put back the config as ${entry.principal || 'someone'} left it at ${new Date(entry.time).toLocaleString()} (${entry.operation}).`),
      rows.length ? h('p', {}, `${diffSummary(rows)} from the config now:`) : h('p', {}, 'The config now is already this one: restoring changes nothing.'),
      diffTable(rows, `What the restore changes in ${name}'s config`),
      hidden.size ? h('p', { class: 'muted small' }, `Secret keys keep their current values: ${[...hidden].join(', ')}.`) : null,
      form.dirty() ? h('p', { class: 'notice warn' }, 'Your changes not applied in the form are dropped.') : null);
    const go = await dialog(`Restore ${name}'s config?`, body, [{ label: 'Cancel', value: false }, { label: 'Restore', value: true, kind: 'primary' }]);
    if (!go) return;
    result.textContent = 'Restoring…';
    try {
      const out = await api.call('POST', `/sluice/connectors/${api.enc(name)}/config/history/${api.enc(entry.id)}/restore`);
      current = (out && out.connector && out.connector.config) || await api.call('GET', path);
      info.config = current;
      form.reset(current);
      mount(result, h('span', { class: 'ok' }, out && out.history_id ? `✓ Restored: ${diffSummary(rows)}.` : '✓ Nothing to restore: the config already was this one.'),
        out && out.kept_current && out.kept_current.length ? ` Kept the current values of ${out.kept_current.join(', ')}.` : '');
      await loadHistory();
    } catch (e) {
      result.textContent = '';
      failure.textContent = `Restore failed: ${e.message}`;
      failure.hidden = false;
      failure.focus();
      return;
    }
    result.focus();
  }

  // Poll: the history, and whether the config changed elsewhere (shown
  // at once when the form holds no change, flagged when it does).
  async function poll() {
    const [server] = await Promise.all([api.call('GET', path).catch(() => null), loadHistory()]);
    if (!server || !ctx.live()) return;
    const theirs = configDiff(current, server, form.secret);
    if (!theirs.length) { elsewhere.hidden = true; return; }
    if (!form.dirty()) {
      current = server;
      info.config = server;
      form.reset(server);
      elsewhere.hidden = true;
      result.textContent = `The config was changed elsewhere (${diffSummary(theirs)}): the form shows it now.`;
    } else {
      elsewhere.textContent = `The config was changed elsewhere since this page read it (${theirs.map(r => r.key).join(', ')}): applying replaces that change. Discard your changes to see it.`;
      elsewhere.hidden = false;
    }
  }
  await ctx.every(5000, poll);
}

function keys(d) {
  if (!d) return '—';
  const part = (label, list, cls) => list && list.length ? h('div', { class: `dk-line ${cls}` }, h('span', { class: `dk dk-${cls}` }, label), ' ', list.join(', ')) : null;
  const out = [part('changed', d.changed, 'changed'), part('added', d.added, 'added'), part('removed', d.removed, 'removed')].filter(Boolean);
  return out.length ? out : h('span', { class: 'muted' }, 'no key');
}
