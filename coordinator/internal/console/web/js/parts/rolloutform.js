// The form that creates a config rollout (/ui/rollouts/new): a selector
// (a glob or names), the patch as JSON, the batches and the health gate.
// POST /sluice/rollouts has no dry run, so the preview is made here from
// the connectors' configs as they are now (GET /connectors?expand=info):
// which connectors match, the batches they fall in, and each one's diff.
// The server validates the patched configs again and applies nothing if
// any would be invalid.
//
// Stable hooks: form#rollout-form, input[name=selector-kind] (match|names),
// input#rollout-match, textarea#rollout-names, textarea#rollout-patch,
// input#rollout-batches, input#rollout-running-for,
// input#rollout-max-failed, select#rollout-on-failure,
// button#rollout-preview, section#rollout-preview-result,
// button#rollout-create, #rollout-form-error.

import { h, mount, field } from '../dom.js';
import * as api from '../api.js';
import { confirm } from './modal.js';
import { configDiff, diffTable, plural, focusFirst, missing } from './fleetkit.js';

/**
 * parsePatch reads the JSON editor: an object whose values are strings
 * (set the key) or null (remove it). It returns {patch} or {error}.
 */
export function parsePatch(text) {
  let v;
  try { v = JSON.parse(text); } catch (e) { return { error: `Not JSON: ${e.message}` }; }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return { error: 'The patch is a JSON object: {"key": "value", "gone": null}.' };
  const keys = Object.keys(v);
  if (!keys.length) return { error: 'The patch is empty: give at least one key.' };
  const bad = keys.filter(k => v[k] !== null && typeof v[k] !== 'string');
  if (bad.length) return { error: `Config values are strings (or null to remove the key): ${bad.map(k => `"${k}"`).join(', ')} ${bad.length === 1 ? 'is' : 'are'} not. Quote ${bad.length === 1 ? 'it' : 'them'}, as in "batch.size": "500".` };
  return { patch: v };
}

/** parseBatches reads "1, 10, 25%, rest" into [1, 10, "25%", "rest"]. */
export function parseBatches(text) {
  const out = [];
  for (const part of text.split(',').map(s => s.trim()).filter(Boolean)) {
    if (/^\d+$/.test(part) && Number(part) >= 1) out.push(Number(part));
    else if (/^\d+(\.\d+)?%$/.test(part) || part === 'rest') out.push(part);
    else return { error: `Invalid batch "${part}": a number of connectors (1 or more), a share such as 25%, or rest.` };
  }
  return { batches: out };
}

/**
 * planBatches splits n connectors into batches as the server does: a
 * number, a share of n rounded up, or the rest; what is left goes in one
 * last batch, and a batch that would be empty is dropped.
 */
export function planBatches(n, batches) {
  const sizes = [];
  let left = n;
  for (const b of batches) {
    if (left <= 0) break;
    let size = b === 'rest' ? left : typeof b === 'number' ? b : Math.ceil(n * parseFloat(b) / 100);
    size = Math.min(Math.max(size, 0), left);
    if (size > 0) { sizes.push(size); left -= size; }
  }
  if (left > 0) sizes.push(left);
  return sizes;
}

/** rolloutForm fills root with the form; onCreated(rollout) follows a 201. */
export function rolloutForm(root, onCreated) {
  const err = h('p', { id: 'rollout-form-error', class: 'error', role: 'alert', hidden: true });
  const kindMatch = h('input', { type: 'radio', name: 'selector-kind', value: 'match', checked: true, id: 'sel-match' });
  const kindNames = h('input', { type: 'radio', name: 'selector-kind', value: 'names', id: 'sel-names' });
  const match = h('input', { id: 'rollout-match', placeholder: 'orders-*', spellcheck: 'false', autocomplete: 'off' });
  const names = h('textarea', { id: 'rollout-names', rows: 3, spellcheck: 'false', placeholder: 'one name a line' });
  const patch = h('textarea', { id: 'rollout-patch', rows: 6, spellcheck: 'false', 'aria-describedby': 'rollout-patch-error' }, '{\n  "batch.size": "500"\n}');
  const patchErr = h('div', { id: 'rollout-patch-error', class: 'error', role: 'alert', hidden: true });
  const batches = h('input', { id: 'rollout-batches', value: '1, 25%, rest', spellcheck: 'false' });
  const runningFor = h('input', { id: 'rollout-running-for', value: '30s', class: 'fk-narrow' });
  const maxFailed = h('input', { id: 'rollout-max-failed', type: 'number', min: 0, value: 0, class: 'fk-narrow' });
  const onFailure = h('select', { id: 'rollout-on-failure' },
    h('option', { value: 'pause' }, 'pause the rollout'), h('option', { value: 'rollback' }, 'roll every applied batch back'));
  const previewBox = h('section', { id: 'rollout-preview-result', 'aria-live': 'polite' });
  const create = h('button', { id: 'rollout-create', type: 'submit', class: 'primary', disabled: true }, 'Start the rollout…');
  let preview = null; // the request the preview was made for, and its matches

  const matchField = field('Glob', match, 'Go path.Match syntax: *, ?, [a-z]. orders-* matches orders-eu and orders-us.');
  const namesField = field('Names', names, 'One connector name a line (or comma separated).');
  // Only the selector chosen is shown (and sent).
  const pick = () => { matchField.hidden = !kindMatch.checked; namesField.hidden = !kindNames.checked; stale(); };
  kindMatch.addEventListener('change', pick);
  kindNames.addEventListener('change', pick);
  // Any edit makes the preview stale: it must be made again before create.
  function stale() {
    if (preview) { preview = null; mount(previewBox, h('p', { class: 'muted' }, 'The form changed: preview again before you start the rollout.')); }
    create.disabled = true;
  }
  patch.addEventListener('input', () => {
    const p = parsePatch(patch.value);
    patch.setAttribute('aria-invalid', String(!!p.error));
    patchErr.textContent = p.error || '';
    patchErr.hidden = !p.error;
    stale();
  });
  for (const el of [match, names, batches, runningFor, maxFailed, onFailure]) el.addEventListener('input', stale);

  // request reads the form into POST /sluice/rollouts' body, or throws
  // the first thing wrong with it.
  function request() {
    const body = {};
    if (kindMatch.checked) {
      if (!match.value.trim()) throw new Error('Give a glob to match connector names, such as orders-*.');
      body.match = match.value.trim();
    } else {
      body.names = names.value.split(/[\n,]/).map(s => s.trim()).filter(Boolean);
      if (!body.names.length) throw new Error('Give at least one connector name.');
    }
    const p = parsePatch(patch.value);
    if (p.error) throw new Error(`Patch: ${p.error}`);
    body.patch = p.patch;
    const b = parseBatches(batches.value);
    if (b.error) throw new Error(b.error);
    if (b.batches.length) body.batches = b.batches;
    body.health = { running_for: runningFor.value.trim() || '30s', max_failed_tasks: Number(maxFailed.value) || 0 };
    body.on_failure = onFailure.value;
    return body;
  }

  async function doPreview() {
    err.hidden = true;
    let body;
    try { body = request(); } catch (e) { err.textContent = e.message; err.hidden = false; focusFirst(err); return; }
    let all;
    try {
      all = await api.call('GET', '/connectors?expand=info');
    } catch (e) {
      err.textContent = `Could not read the connectors' configs for the preview: ${missing(e, 'the connectors endpoint')}`;
      err.hidden = false;
      return;
    }
    const known = Object.keys(all).sort();
    const chosen = body.match ? known.filter(n => api.glob(body.match, n)) : [...body.names].sort();
    const unknown = chosen.filter(n => !all[n]);
    const sizes = planBatches(chosen.length, body.batches || []);
    const diffs = chosen.filter(n => all[n]).map(n => {
      const before = all[n].info.config;
      const after = { ...before };
      for (const [k, v] of Object.entries(body.patch)) { if (v === null) delete after[k]; else after[k] = v; }
      if (!('name' in after)) after.name = n; // the server keeps the name
      return { name: n, rows: configDiff(before, after) };
    });
    const unchanged = diffs.filter(d => !d.rows.length).length;
    preview = unknown.length || !chosen.length ? null : { body, count: chosen.length };
    create.disabled = !preview;
    let at = 0;
    mount(previewBox, h('div', { class: 'card fk-plan' },
      h('h2', { id: 'rollout-preview-h', tabindex: '-1' }, chosen.length ? `Preview: ${plural(chosen.length, 'connector')} in ${plural(sizes.length, 'batch', 'batches')}` : 'Preview: no connector matches'),
      unknown.length ? h('p', { class: 'error' }, `Unknown connector${unknown.length === 1 ? '' : 's'}: ${unknown.join(', ')}. The rollout would be refused (404).`) : null,
      !chosen.length ? h('p', { class: 'error' }, 'A rollout that matches no connector is refused (400).') : null,
      unchanged ? h('p', { class: 'muted' }, `${plural(unchanged, 'connector')} already ${unchanged === 1 ? 'has' : 'have'} this patch: written again, with no change.`) : null,
      h('ol', { class: 'fk-batches' }, sizes.map((size, i) => {
        const group = diffs.slice(at, at + size);
        at += size;
        return h('li', {}, h('details', { open: i === 0 }, h('summary', {}, `Batch ${i + 1}: ${plural(size, 'connector')}`),
          group.map(d => h('div', {}, h('h3', {}, d.name), diffTable(d.rows, `What the patch changes in ${d.name}`)))));
      })),
      h('p', { class: 'muted' }, `Each batch is held to the health gate: every connector that was RUNNING, and its tasks, RUNNING for ${body.health.running_for} with at most ${body.health.max_failed_tasks} task(s) FAILED. On failure: ${body.on_failure === 'rollback' ? 'every applied batch is rolled back' : 'the rollout pauses'}. This preview is made in the browser from the configs as they are now; the coordinator validates every patched config again and applies nothing if one is invalid.`)));
    focusFirst(previewBox.querySelector('h2'));
  }

  const form = h('form', { id: 'rollout-form', class: 'card', on: { submit: async e => {
    e.preventDefault();
    if (!preview) return;
    const n = preview.count;
    if (!await confirm(`Roll the patch out to ${plural(n, 'connector')}?`, h('p', {},
      'Each connector\'s config is patched as PATCH …/config does (its tasks restart with it), batch by batch, each batch held to the health gate before the next.'),
    `Start: ${plural(n, 'connector')}`)) return;
    create.disabled = true;
    try {
      onCreated(await api.call('POST', '/sluice/rollouts', preview.body));
    } catch (e2) {
      err.textContent = missing(e2, 'config rollouts (POST /sluice/rollouts)');
      err.hidden = false;
      create.disabled = false;
      focusFirst(err);
    }
  } } },
  h('fieldset', {}, h('legend', {}, 'Connectors'),
    h('div', { class: 'fk-row' }, h('label', { class: 'fk-check' }, kindMatch, ' Names matching a glob'), h('label', { class: 'fk-check' }, kindNames, ' These names')),
    matchField, namesField),
  field('Patch (JSON)', patch, 'Merged into each config as PATCH …/config merges it: a string sets the key, null removes it.'),
  patchErr,
  h('fieldset', {}, h('legend', {}, 'Batches and health gate'),
    field('Batches', batches, 'In order: a number of connectors, a share such as 25%, or rest; what the list leaves goes in one last batch.'),
    h('div', { class: 'fk-row' },
      field('Healthy for', runningFor, 'A Go duration: 30s, 2m.'),
      field('Failed tasks allowed', maxFailed),
      field('When a batch fails', onFailure))),
  err,
  h('div', { class: 'actions' },
    h('button', { id: 'rollout-preview', type: 'button', on: { click: doPreview } }, 'Preview'),
    create));
  namesField.hidden = true;
  mount(root, form, previewBox);
  match.focus();
}
