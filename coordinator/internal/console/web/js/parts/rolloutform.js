// The form that creates a config rollout (/ui/rollouts/new): a selector
// (a glob or names), the patch as JSON, the batches and the health gate.
// Preview asks the coordinator for the dry run (POST /sluice/rollouts?
// dry_run=true): the batches, each connector's config before and after,
// every patched config validated, nothing recorded. The rollout can start
// only from a preview of the form as it is.
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
 * parsePatch reads the JSON editor: an object whose values set keys
 * (null removes one). It returns {patch} or {error}; the coordinator
 * checks the values.
 */
export function parsePatch(text) {
  let v;
  try { v = JSON.parse(text); } catch (e) { return { error: `Not JSON: ${e.message}` }; }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return { error: 'The patch is a JSON object: {"key": "value", "gone": null}.' };
  if (!Object.keys(v).length) return { error: 'The patch is empty: give at least one key.' };
  return { patch: v };
}

/** parseBatches reads "1, 10, 25%, rest" into [1, 10, "25%", "rest"]; the coordinator checks each. */
export function parseBatches(text) {
  return text.split(',').map(s => s.trim()).filter(Boolean).map(p => (/^\d+$/.test(p) ? Number(p) : p));
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
    if (b.length) body.batches = b;
    body.health = { running_for: runningFor.value.trim() || '30s', max_failed_tasks: Number(maxFailed.value) || 0 };
    body.on_failure = onFailure.value;
    return body;
  }

  async function doPreview() {
    err.hidden = true;
    let body;
    try { body = request(); } catch (e) { err.textContent = e.message; err.hidden = false; focusFirst(err); return; }
    let plan;
    try {
      plan = await api.call('POST', '/sluice/rollouts?dry_run=true', body);
    } catch (e) {
      stale();
      mount(previewBox);
      err.textContent = missing(e, 'rollout dry runs (POST /sluice/rollouts?dry_run=true)');
      err.hidden = false;
      focusFirst(err);
      return;
    }
    const n = plan.batches.reduce((k, b) => k + b.connectors.length, 0);
    const unchanged = plan.batches.flatMap(b => b.connectors).filter(c => !configDiff(c.before, c.after).length).length;
    preview = { body, count: n };
    create.disabled = false;
    const gate = plan.request.health || {};
    mount(previewBox, h('div', { class: 'card fk-plan' },
      h('h2', { id: 'rollout-preview-h', tabindex: '-1' }, `Dry run: ${plural(n, 'connector')} in ${plural(plan.batches.length, 'batch', 'batches')}`),
      h('p', {}, 'Every patched config is valid. Nothing was started.'),
      unchanged ? h('p', { class: 'muted' }, `${plural(unchanged, 'connector')} already ${unchanged === 1 ? 'has' : 'have'} this patch: written again, with no change.`) : null,
      h('ol', { class: 'fk-batches' }, plan.batches.map((b, i) => h('li', {},
        h('details', { open: i === 0 }, h('summary', {}, `Batch ${i + 1}: ${plural(b.connectors.length, 'connector')}`),
          b.connectors.map(c => h('div', {}, h('h3', {}, c.name),
            diffTable(configDiff(c.before, c.after), `What the patch changes in ${c.name}`))))))),
      h('p', { class: 'muted' }, `Each batch is held to the health gate: every connector that was RUNNING, and its tasks, RUNNING for ${gate.running_for} with at most ${gate.max_failed_tasks} task(s) FAILED. On failure: ${plan.request.on_failure === 'rollback' ? 'every applied batch is rolled back' : 'the rollout pauses'}. A connector changed by hand before its batch gets the patch merged into its config as it is then.`)));
    focusFirst(previewBox.querySelector('h2'));
  }

  const form = h('form', { id: 'rollout-form', class: 'card', on: { submit: async e => {
    e.preventDefault();
    if (!preview) { doPreview(); return; } // Enter in a field previews first
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
