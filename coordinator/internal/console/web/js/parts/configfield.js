// One key of a connector config as a form field: its label (display name,
// key, required marker), a control fit for its type, its documentation
// and default, and a place for its validation errors.

import { h } from '../dom.js';
import { isReference } from './diff.js';

let lists = 0; // datalist ids

/** controlId is the id of a key's control (stable: tests find it). */
export function controlId(prefix, key) {
  return `${prefix}-${key.replace(/[^A-Za-z0-9_.-]/g, '_')}`;
}

/**
 * configField builds the field of one validate entry {definition, value}.
 * o: {prefix, value (the config's value, undefined when unset), secretSet
 * (the key holds a secret the page does not show), editable, readonly,
 * onInput(key, value)}. It returns {wrap, control, err, key}.
 */
export function configField(info, o) {
  const d = info.definition;
  const key = d.name;
  const id = controlId(o.prefix, key);
  const errId = `${id}-err`;
  const helpId = `${id}-help`;
  const def = d.default_value;
  const has = o.value !== undefined;
  const locked = !o.editable || o.readonly;
  const common = { id, name: key, 'data-key': key, 'aria-describedby': `${helpId} ${errId}`, 'aria-required': d.required ? 'true' : false };
  const fire = e => o.onInput(key, e.target.value);
  let control;
  let list = null;
  if (d.type === 'BOOLEAN') {
    control = h('select', { ...common, disabled: locked, on: { change: fire } },
      h('option', { value: '' }, def === null || def === undefined ? '(not set)' : `default (${def})`),
      ['true', 'false'].map(v => h('option', { value: v, selected: has && String(o.value).toLowerCase() === v }, v)));
    if (has && !['true', 'false'].includes(String(o.value).toLowerCase())) {
      // A value the select does not offer (a provider reference, a typo)
      // stays what it is: validate says what is wrong with it.
      control.append(h('option', { value: o.value, selected: true }, o.value));
    }
  } else {
    const secret = d.type === 'PASSWORD' && !(has && isReference(o.value));
    const props = { ...common, type: secret ? 'password' : 'text', readonly: locked, spellcheck: 'false', autocomplete: secret ? 'new-password' : 'off',
      class: d.width === 'LONG' || d.type === 'LIST' ? 'wide' : '', on: { input: fire } };
    if (secret && o.secretSet) {
      props.value = '';
      props.placeholder = locked ? 'set (hidden)' : 'set (hidden): type to replace, leave empty to keep';
    } else {
      props.value = has ? o.value : '';
      props.placeholder = def !== null && def !== undefined && def !== '' ? `default: ${def}` : '';
    }
    const rec = (info.value && info.value.recommended_values) || [];
    if (rec.length && !locked) {
      list = h('datalist', { id: `cfl-${++lists}` }, rec.map(v => h('option', { value: v })));
      props.list = list.id;
    }
    if (d.type === 'INT' || d.type === 'LONG' || d.type === 'SHORT') props.inputmode = 'numeric';
    control = h('input', props);
  }
  // Kafka's docs hold a little HTML (<code>…</code>): its tags are dropped,
  // and what is left is text, never markup.
  let doc = (d.documentation || '').replace(/<\/?(code|p|br|ul|ol|li|b|i|em|strong|tt|pre)\s*\/?>/gi, '').trim();
  if (doc && !/[.!?)]$/.test(doc)) doc += '.';
  if (def !== null && def !== undefined && def !== '') doc += ` Default: ${def}.`;
  if (d.type === 'LIST' && !/comma/i.test(doc)) doc += ' A comma-separated list.';
  const err = h('div', { class: 'error cf-err', id: errId, hidden: true });
  const named = d.display_name && d.display_name !== key;
  const label = h('label', { for: id },
    h('span', { class: 'cf-name' }, named ? d.display_name : h('code', {}, key), d.required ? h('span', { class: 'req', title: 'required' }, ' *') : null),
    h('span', { class: 'cf-meta' }, named ? h('code', { class: 'cf-key' }, key) : null, h('span', { class: 'cf-type' }, d.type.toLowerCase())));
  const wrap = h('div', { class: ['field', 'cf-field', has ? 'cf-set' : ''], 'data-field': key },
    label, control, list,
    h('div', { class: 'help', id: helpId }, doc.trim()), err);
  return { wrap, control, err, key };
}

/** showErrors puts a field's errors under it (none: hides the box). */
export function showErrors(f, errors) {
  const list = errors || [];
  f.err.replaceChildren(...list.map((m, i) => [i ? h('br') : null, m]).flat().filter(Boolean));
  f.err.hidden = !list.length;
  if (list.length) f.control.setAttribute('aria-invalid', 'true'); else f.control.removeAttribute('aria-invalid');
}

/**
 * otherField builds the field of a key the plugin does not define (a
 * transform's keys, client overrides, …): a text control and a button that
 * removes the key.
 */
export function otherField(key, value, o) {
  const id = controlId(o.prefix, key);
  const control = h('input', { id, name: key, 'data-key': key, value, readonly: !o.editable, spellcheck: 'false', class: 'wide',
    'aria-describedby': `${id}-err`, on: { input: e => o.onInput(key, e.target.value) } });
  const err = h('div', { class: 'error cf-err', id: `${id}-err`, hidden: true });
  const wrap = h('div', { class: 'field cf-field cf-set', 'data-field': key },
    h('label', { for: id }, h('code', {}, key)),
    h('div', { class: 'cf-row' }, control,
      o.editable ? h('button', { type: 'button', class: 'link', 'aria-label': `Remove ${key}`, on: { click: () => o.onRemove(key) } }, 'Remove') : null),
    err);
  return { wrap, control, err, key };
}
