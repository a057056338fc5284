// A connector config as a form built from the plugin's validate endpoint
// (PUT /connector-plugins/{class}/config/validate): its groups as
// sections, each key with its documentation, default and required marker,
// errors inline as the user types, and a JSON view of the same config.
//
// The config the form edits holds only the keys the user (or the
// connector) set: a default is shown, never written. Values are kept as
// written — a ${provider:path:key} reference stays a reference — and a
// secret (a PASSWORD key) is never put on the page: it reads "[hidden]"
// in the JSON view and the diff, and keeps its current value unless the
// user types a new one.
//
// Without the operator role (validate needs it) the form is read-only and
// built from GET /connector-plugins/{class}/config.
//
// Stable hooks: a key's control #<prefix>-<key> and [data-key="<key>"],
// its field [data-field="<key>"] with its errors in .cf-err;
// [data-test=config-status] (live error count), [data-test=config-form],
// [data-test=config-json] (#<prefix>-json), [data-test=config-view-form]
// and [data-test=config-view-json] (the view toggle),
// [data-test=config-add-key], [data-test=config-add-value],
// [data-test=config-add]; remove buttons [aria-label="Remove <key>"].

import { h, mount } from '../dom.js';
import * as api from '../api.js';
import { configDiff, HIDDEN, isReference } from './diff.js';
import { configField, otherField, showErrors } from './configfield.js';

const DEBOUNCE = 400;

/**
 * configForm builds the form. o: {config, baseline (what "changed" is
 * measured from; default config), editable, prefix (ids of controls: the
 * key's control is #<prefix>-<key>), outside (keys the caller shows
 * itself), readonly (keys shown but not editable), ownFirst (the
 * plugin's own keys before the common ones), errorsOf ('all': every
 * key's errors at once; 'touched': only of keys the user changed, until
 * showAllErrors), onChange(config), onResult(infos)}.
 */
export function configForm(o) {
  const prefix = o.prefix || 'cfg';
  const outside = new Set(o.outside || []);
  const readonly = new Set(o.readonly || []);
  let cfg = { ...o.config };
  let base = { ...(o.baseline || o.config) };
  let infos = null;
  let defs = new Map();
  let fields = new Map();
  let signature = '';
  let showAll = o.errorsOf !== 'touched';
  let seq = 0;
  let timer = null;
  let pending = null;
  const touched = new Set();
  // Keys the user edited stay on the form while the page lives, even when
  // emptying one removed it and the plugin describes it only while set
  // (a client override, a transform's key): its field must not vanish
  // under the user's caret.
  const kept = new Set();
  const opened = new Map(); // group → open, as the user left it

  const status = h('p', { class: 'cf-status muted', 'aria-live': 'polite', 'data-test': 'config-status' }, 'Loading the plugin\'s settings…');
  const formBox = h('div', { class: 'cf-groups', 'data-test': 'config-form' });
  const jsonArea = h('textarea', { id: `${prefix}-json`, rows: 18, spellcheck: 'false', readonly: !o.editable, 'aria-describedby': `${prefix}-json-err`,
    'data-test': 'config-json', on: { input: () => { clearTimeout(jsonTimer); jsonTimer = setTimeout(readJSON, DEBOUNCE); } } });
  let jsonTimer = null;
  const jsonErr = h('div', { class: 'error', id: `${prefix}-json-err`, role: 'alert', hidden: true });
  const jsonBox = h('div', { class: 'cf-json', hidden: true },
    h('label', { for: jsonArea.id }, 'Config as JSON'),
    h('p', { class: 'help muted' }, `Secret values read ${HIDDEN}: leave them so to keep them. A key you delete here is removed from the config.`),
    jsonArea, jsonErr);
  const viewBtns = ['Form', 'JSON'].map(v => h('button', { type: 'button', 'aria-pressed': String(v === 'Form'), 'data-test': `config-view-${v.toLowerCase()}`,
    on: { click: () => view(v) } }, v));
  const el = h('div', { class: 'configform' },
    h('div', { class: 'cf-head' }, h('div', { class: 'segmented', role: 'group', 'aria-label': 'Show the config as' }, viewBtns), status),
    formBox, jsonBox);

  function view(v) {
    if (v === 'JSON' && !infos) {
      // Which keys are secrets is the plugin's to say: without its
      // settings the JSON view would show them in clear.
      status.textContent = 'The JSON view waits for the plugin\'s settings, which say which values are secret.';
      return;
    }
    if (v === 'JSON') jsonArea.value = toJSON();
    else if (!jsonErr.hidden) {
      status.textContent = 'The JSON has an error: the form shows the last valid config.';
    }
    for (const b of viewBtns) b.setAttribute('aria-pressed', String(b.textContent === v));
    formBox.hidden = v !== 'Form';
    jsonBox.hidden = v !== 'JSON';
  }

  const secret = key => {
    const d = defs.get(key);
    return !!(d && d.definition.type === 'PASSWORD');
  };
  // A secret the page holds only as the baseline's value: shown as set,
  // never as text.
  const secretSet = key => secret(key) && key in cfg && cfg[key] === base[key] && !isReference(cfg[key]);

  function toJSON() {
    const out = {};
    for (const k of Object.keys(cfg).sort()) out[k] = secret(k) && !isReference(cfg[k]) ? HIDDEN : cfg[k];
    return JSON.stringify(out, null, 2);
  }

  function readJSON() {
    let parsed;
    try {
      parsed = JSON.parse(jsonArea.value);
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('it must be one object of keys and values');
      for (const [k, v] of Object.entries(parsed)) {
        if (typeof v === 'number' || typeof v === 'boolean') parsed[k] = String(v);
        else if (typeof v !== 'string') throw new Error(`the value of "${k}" must be a string`);
      }
    } catch (e) {
      jsonErr.textContent = `Not valid JSON: ${e.message}`;
      jsonErr.hidden = false;
      jsonArea.setAttribute('aria-invalid', 'true');
      return;
    }
    jsonErr.hidden = true;
    jsonArea.removeAttribute('aria-invalid');
    for (const [k, v] of Object.entries(parsed)) {
      // "[hidden]" is the secret the JSON view did not show: keep it.
      if (v === HIDDEN && secret(k) && (k in cfg || k in base)) parsed[k] = k in cfg ? cfg[k] : base[k];
      if (parsed[k] !== cfg[k]) touched.add(k);
    }
    for (const k of Object.keys(cfg)) if (!(k in parsed)) touched.add(k);
    cfg = parsed;
    changed(true);
  }

  function setKey(key, v) {
    if (v === '' && secret(key) && key in base) v = base[key]; // empty: keep the secret
    // Emptying a key the plugin knows falls back to its default; a key it
    // does not know stays (empty) until removed, so its field stays put
    // while the user types a new value.
    if (v === '' && base[key] !== '' && defs.has(key)) delete cfg[key]; else cfg[key] = v;
    touched.add(key);
    kept.add(key);
    changed(false);
  }

  function changed(rebuild) {
    if (rebuild) draw(true);
    if (o.onChange) o.onChange(config());
    clearTimeout(timer);
    timer = setTimeout(() => { validate(); }, DEBOUNCE);
  }

  async function fetchInfos(cls) {
    if (o.editable) return api.call('PUT', `/connector-plugins/${api.enc(cls)}/config/validate`, cfg);
    // Read-only: the plugin's definitions, no check of the values.
    const list = await api.call('GET', `/connector-plugins/${api.enc(cls)}/config`);
    const groups = [...new Set(list.map(d => d.group).filter(Boolean))];
    return { name: cls, error_count: 0, groups, configs: list.map(d => ({ definition: d, value: { name: d.name, errors: [], visible: true, recommended_values: [] } })) };
  }

  function validate() {
    clearTimeout(timer);
    const cls = cfg['connector.class'];
    if (!cls) {
      status.textContent = 'The config names no connector.class.';
      return Promise.resolve(null);
    }
    const my = ++seq;
    if (infos) status.textContent = 'Checking…';
    pending = fetchInfos(cls).then(r => {
      if (my !== seq) return pending;
      infos = r;
      defs = new Map(r.configs.map(c => [c.definition.name, c]));
      draw(false);
      if (o.onResult) o.onResult(r);
      return r;
    }, e => {
      if (my !== seq) return pending;
      status.textContent = '';
      status.append(h('span', { class: 'error', role: 'alert' }, `The plugin's settings could not be read: ${e.message}`));
      return null;
    });
    return pending;
  }

  // draw builds the sections again when the keys shown changed (keeping
  // focus and the caret where they were), and otherwise only updates
  // errors and the status.
  function draw(force) {
    if (!infos) return;
    const others = [...new Set([...Object.keys(cfg), ...kept])].filter(k => !defs.has(k) && !outside.has(k)).sort();
    const shownKeys = infos.configs.filter(c => (c.value.visible || c.definition.name in cfg) && !outside.has(c.definition.name));
    const sig = shownKeys.map(c => `${c.definition.group}/${c.definition.name}`).join('|') + '#' + others.join('|');
    if (force || sig !== signature) {
      signature = sig;
      const active = document.activeElement;
      const focusKey = active && formBox.contains(active) ? active.getAttribute('data-key') : null;
      const sel = focusKey && active.selectionStart !== undefined ? [active.selectionStart, active.selectionEnd] : null;
      build(shownKeys, others);
      const again = focusKey && fields.get(focusKey);
      if (again) {
        again.control.focus();
        if (sel && again.control.setSelectionRange) try { again.control.setSelectionRange(...sel); } catch { /* not a text control */ }
      }
    }
    let n = 0;
    let hiddenN = 0;
    for (const c of infos.configs) {
      const errs = c.value.errors || [];
      n += errs.length;
      const f = fields.get(c.definition.name);
      const show = showAll || touched.has(c.definition.name);
      if (f) showErrors(f, show ? errs : []);
      else if (errs.length && !outside.has(c.definition.name)) hiddenN += errs.length;
    }
    status.replaceChildren(!o.editable ? 'Read-only: changing a config needs the operator role.'
      : n === 0 ? h('span', { class: 'ok' }, '✓ No error') : h('span', { class: 'error-text' }, `${n} error${n === 1 ? '' : 's'}`
        + (hiddenN ? ` (${hiddenN} on keys not shown)` : '') + (showAll ? '' : ': each shows under its field once you change it')));
  }

  function build(shownKeys, others) {
    fields = new Map();
    const byGroup = new Map();
    for (const c of shownKeys) {
      const g = c.definition.group || '';
      if (!byGroup.has(g)) byGroup.set(g, []);
      byGroup.get(g).push(c);
    }
    for (const list of byGroup.values()) list.sort((a, b) => (a.definition.order_in_group ?? 0) - (b.definition.order_in_group ?? 0));
    // The common keys and the plugin's own (no group) first, then the rest.
    const top = o.ownFirst ? ['', 'Common'] : ['Common', ''];
    const order = [...top, ...infos.groups.filter(g => g !== 'Common'), ...[...byGroup.keys()].filter(g => g && g !== 'Common' && !infos.groups.includes(g))];
    const sections = [];
    for (const g of [...new Set(order)]) {
      const list = byGroup.get(g);
      if (!list || !list.length) continue;
      const items = list.map(c => {
        const key = c.definition.name;
        const f = configField(c, { prefix, value: cfg[key], secretSet: secretSet(key), editable: o.editable, readonly: readonly.has(key), onInput: setKey });
        fields.set(key, f);
        return f.wrap;
      });
      sections.push(section(g || `${pluginName()} settings`, g === 'Common' || g === '', items, list.some(c => c.definition.name in cfg)));
    }
    if (others.length) {
      const items = others.map(k => {
        const f = otherField(k, cfg[k] ?? '', { prefix, editable: o.editable, onInput: setKey, onRemove: removeKey });
        fields.set(k, f);
        return f.wrap;
      });
      sections.push(section('Other keys', true, items, true));
    }
    if (o.editable) sections.push(addKey());
    mount(formBox, sections);
  }

  function pluginName() {
    const cls = cfg['connector.class'] || 'Connector';
    return cls.slice(cls.lastIndexOf('.') + 1);
  }

  // removeKey drops a key the plugin does not know; focus goes to the
  // "Add a key" field, as the removed field is gone.
  function removeKey(key) {
    delete cfg[key];
    kept.delete(key);
    touched.add(key);
    changed(true);
    const next = formBox.querySelector(`#${prefix}-newkey`);
    if (next) next.focus();
  }

  function section(title, main, items, anySet) {
    if (main) return h('section', { class: 'cf-group card', 'aria-label': title }, h('h3', {}, title), items);
    const d = h('details', { class: 'cf-group card', open: opened.has(title) ? opened.get(title) : anySet },
      h('summary', {}, h('span', { class: 'cf-title' }, title), h('span', { class: 'muted small' }, ` ${items.length} setting${items.length === 1 ? '' : 's'}`)), items);
    d.addEventListener('toggle', () => opened.set(title, d.open));
    return d;
  }

  function addKey() {
    const k = h('input', { id: `${prefix}-newkey`, placeholder: 'transforms.route.type', spellcheck: 'false', 'data-test': 'config-add-key' });
    const v = h('input', { id: `${prefix}-newvalue`, spellcheck: 'false', class: 'wide', 'data-test': 'config-add-value' });
    const err = h('div', { class: 'error', role: 'alert', hidden: true });
    const add = () => {
      const key = k.value.trim();
      err.hidden = true;
      if (!key) { err.textContent = 'Name the key.'; err.hidden = false; k.focus(); return; }
      if (key in cfg) { err.textContent = `${key} is already set: change it in its field.`; err.hidden = false; k.focus(); return; }
      cfg[key] = v.value;
      touched.add(key);
      kept.add(key);
      changed(true);
      const f = fields.get(key);
      if (f) f.control.focus();
    };
    return h('section', { class: 'cf-group card cf-add', 'aria-label': 'Add a key' }, h('h3', {}, 'Add a key'),
      h('p', { class: 'help muted' }, 'For keys the plugin does not list: a transform\'s or predicate\'s settings, client overrides.'),
      h('div', { class: 'cf-row' },
        h('div', { class: 'field' }, h('label', { for: k.id }, 'Key'), k),
        h('div', { class: 'field grow' }, h('label', { for: v.id }, 'Value'), v),
        h('button', { type: 'button', 'data-test': 'config-add', on: { click: add } }, 'Add')), err);
  }

  /** config is the config to send: secrets with their real values. */
  function config() { return { ...cfg }; }

  validate();

  return {
    el,
    config,
    secret,
    /** set changes a key from outside the form (null: removes it). */
    set(key, v) { if (v === null) delete cfg[key]; else cfg[key] = v; touched.add(key); changed(false); },
    /** dirty says whether the config differs from the baseline. */
    dirty: () => configDiff(base, cfg).length > 0,
    /** diff is the change from the baseline, secrets masked. */
    diff: () => configDiff(base, cfg, secret),
    /** validateNow checks the config at once; resolves with the answer (null on failure). */
    validateNow: () => validate(),
    /** showAllErrors shows every key's errors, touched or not. */
    showAllErrors() { showAll = true; draw(false); },
    /** focusFirstError moves focus to the first field with an error; false when none. */
    focusFirstError() {
      for (const f of fields.values()) if (!f.err.hidden) { f.control.focus(); return true; }
      return false;
    },
    /** reset makes config the baseline and the value (after an apply). */
    reset(next) { cfg = { ...next }; base = { ...next }; touched.clear(); kept.clear(); showAll = o.errorsOf !== 'touched'; if (!jsonBox.hidden) jsonArea.value = toJSON(); changed(true); },
    /** discard drops the changes. */
    discard() { cfg = { ...base }; touched.clear(); kept.clear(); if (!jsonBox.hidden) jsonArea.value = toJSON(); jsonErr.hidden = true; changed(true); },
  };
}
