// The create page, /ui/new[?plugin=<class>]: choose a plugin, name the
// connector, fill the form the plugin's validate endpoint describes, pick
// the state it starts in (KIP-980), and create it with POST /connectors.
// A validation error shows on its field before anything is created.
//
// Stable hooks for browser tests:
//   #new-plugin (select), #new-name (input), #new-state (select:
//   RUNNING|PAUSED|STOPPED), #new-submit (button), #new-error (alert),
//   #new-name-err (the name's errors), the form's controls #new-<key>
//   (and [data-key="<key>"]), [data-test=config-status].

import { h, mount, field } from '../dom.js';
import * as api from '../api.js';
import { go, setGuard } from '../router.js';
import { configForm } from '../parts/configform.js';
import { showErrors } from '../parts/configfield.js';

export async function render(ctx) {
  document.title = 'New connector · Sluice';
  if (!api.can('operator')) {
    mount(ctx.root, h('h1', {}, 'New connector'),
      h('p', { class: 'notice' }, 'Creating a connector needs the operator role, which you do not hold. ', h('a', { href: '/ui/' }, 'See the connectors.')));
    return;
  }
  const failure = h('p', { class: 'error', role: 'alert', id: 'new-error', tabindex: '-1', hidden: true });
  mount(ctx.root, h('h1', {}, 'New connector'), h('p', { class: 'muted' }, 'Loading the plugins…'));
  let plugins;
  try {
    plugins = await api.call('GET', '/connector-plugins');
  } catch (e) {
    mount(ctx.root, h('h1', {}, 'New connector'), h('p', { class: 'error', role: 'alert' }, `The plugins could not be listed: ${e.message}`));
    return;
  }
  if (!ctx.live()) return;

  const wanted = ctx.query.get('plugin') || '';
  const byType = t => plugins.filter(p => p.type === t).sort((a, b) => a.class.localeCompare(b.class));
  const pluginSel = h('select', { id: 'new-plugin', required: true, on: { change: () => pick(pluginSel.value) } },
    h('option', { value: '' }, 'Choose a plugin…'),
    ['source', 'sink'].map(t => h('optgroup', { label: t === 'source' ? 'Sources (into Kafka)' : 'Sinks (out of Kafka)' },
      byType(t).map(p => h('option', { value: p.class, selected: p.class === wanted }, `${short(p.class)}${p.version ? ` ${p.version}` : ''}`)))));
  const nameIn = h('input', { id: 'new-name', required: true, 'aria-required': 'true', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'new-name-err',
    on: { input: () => { nameTouched = true; if (form) form.set('name', nameIn.value || null); } } });
  const nameErr = h('div', { class: 'error cf-err', id: 'new-name-err', hidden: true });
  const nameField = { control: nameIn, err: nameErr };
  let nameTouched = false;
  const stateSel = h('select', { id: 'new-state' },
    h('option', { value: 'RUNNING' }, 'Running: start its tasks at once'),
    h('option', { value: 'PAUSED' }, 'Paused: tasks placed, not running'),
    h('option', { value: 'STOPPED' }, 'Stopped: no tasks until resumed (set offsets first)'));
  const submit = h('button', { type: 'submit', class: 'primary', id: 'new-submit', disabled: true }, 'Create connector');
  const formBox = h('div', { id: 'new-config' });
  const classHelp = h('div', { class: 'help' });
  let form = null;

  function pick(cls) {
    const p = plugins.find(x => x.class === cls);
    classHelp.textContent = p ? `${p.class} — a ${p.type} connector${p.version ? `, version ${p.version}` : ''}.` : '';
    if (!p) { form = null; mount(formBox); submit.disabled = true; return; }
    const keep = form ? form.config() : {};
    const start = { 'connector.class': p.class };
    if (nameIn.value) start.name = nameIn.value;
    // What the user typed for another plugin stays: a shared key
    // (tasks.max, converters) keeps its value, and one the new plugin does
    // not know shows under "Other keys", to remove with a click.
    for (const [k, v] of Object.entries(keep)) if (!(k in start)) start[k] = v;
    const mine = configForm({ config: start, baseline: {}, editable: true, prefix: 'new', outside: ['name', 'connector.class'], ownFirst: true, errorsOf: 'touched',
      onResult: r => {
        if (form !== mine) return; // a late answer for the plugin chosen before
        const c = r.configs.find(x => x.definition.name === 'name');
        showErrors(nameField, nameTouched && c ? c.value.errors : []);
      } });
    form = mine;
    mount(formBox, h('h2', {}, 'Settings'), form.el);
    submit.disabled = false;
  }

  async function create(e) {
    e.preventDefault();
    failure.hidden = true;
    if (!form) { failure.textContent = 'Choose a plugin first.'; failure.hidden = false; pluginSel.focus(); return; }
    submit.disabled = true;
    const old = submit.textContent;
    submit.textContent = 'Checking…';
    try {
      const r = await form.validateNow();
      nameTouched = true;
      form.showAllErrors();
      const c = r && r.configs.find(x => x.definition.name === 'name');
      showErrors(nameField, c ? c.value.errors : []);
      if (!r) { failure.textContent = 'The config could not be checked: see the message above the form.'; failure.hidden = false; return; }
      if (r.error_count > 0) {
        failure.textContent = `The config has ${r.error_count} error${r.error_count === 1 ? '' : 's'}: nothing was created. Each is shown on its field.`;
        failure.hidden = false;
        if (!nameErr.hidden) nameIn.focus(); else if (!form.focusFirstError()) failure.focus();
        return;
      }
      submit.textContent = 'Creating…';
      const name = nameIn.value;
      const body = { name, config: { ...form.config(), name }, initial_state: stateSel.value };
      await api.call('POST', '/connectors', body);
      setGuard(null);
      go(`/ui/connectors/${api.enc(name)}`);
    } catch (err) {
      failure.textContent = err.message;
      failure.hidden = false;
      failure.focus();
    } finally {
      submit.disabled = !form;
      submit.textContent = old;
    }
  }

  mount(ctx.root,
    h('div', { class: 'page-head' }, h('h1', {}, 'New connector')),
    h('form', { class: 'create', novalidate: true, 'aria-label': 'New connector', on: { submit: create } },
      h('div', { class: 'card create-head' },
        field('Plugin', pluginSel), classHelp,
        h('div', { class: 'field' }, h('label', { for: 'new-name' }, 'Name', h('span', { class: 'req', title: 'required' }, ' *')), nameIn,
          h('div', { class: 'help' }, 'Unique in the cluster; it names the connector in every URL.'), nameErr),
        field('Start as', stateSel, 'Stopped or paused lets you check or set its offsets before it runs (KIP-980).')),
      formBox,
      failure,
      h('div', { class: 'actions create-actions' }, h('a', { href: '/ui/', class: 'button' }, 'Cancel'), submit)));
  setGuard(() => !form || !nameIn.value && Object.keys(form.config()).length <= 2 || window.confirm('Leave without creating the connector?'));
  ctx.onLeave(() => setGuard(null));
  if (pluginSel.value) pick(pluginSel.value);
  (pluginSel.value ? nameIn : pluginSel).focus();
}

function short(cls) {
  const i = cls.lastIndexOf('.');
  return i < 0 ? cls : cls.slice(i + 1);
}
