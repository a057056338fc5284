// Migrate connectors from a Kafka Connect cluster into Sluice with their
// positions (POST /sluice/migrations, admin). The coordinator reads Kafka
// Connect's REST API — the browser cannot: Kafka Connect sends no CORS
// headers — only at URLs its allowlist flag names, and never with the
// caller's credentials. The page: a URL and a glob → dry run → the plan
// (each connector, its config and the positions it would carry) → choose
// → migrate, one connector at a time, with each one's result and the
// step that failed.
//
// Stable hooks: form[data-test=migrate-form]; input[data-test=
// migrate-url], migrate-connectors, migrate-user, migrate-password,
// migrate-stop-timeout, migrate-leave-stopped, migrate-delete-source; buttons data-test= migrate-dry-run,
// migrate-apply, migrate-details; table[data-test=migrate-plan] > tbody >
// tr[data-connector=<name>] with input[data-test=migrate-pick];
// table[data-test=migrate-results] > tbody > tr[data-connector=<name>]
// [data-result=migrated|failed|…]; div[data-test=migrate-error];
// progress[data-test=migrate-progress].

import { h, mount, field } from '../dom.js';
import * as api from '../api.js';
import { setQuery } from '../router.js';
import { confirm } from '../parts/modal.js';
import { parse, stringify } from '../parts/json.js';
import { partitionCell, offsetCell } from '../parts/offsets-diff.js';

const ENDPOINT = '/sluice/migrations';

export async function render(ctx) {
  document.title = 'Migrate · Sluice';
  if (!api.can('admin')) {
    mount(ctx.root, h('h1', {}, 'Migrate from Kafka Connect'),
      h('p', { class: 'notice' }, 'Migrating connectors needs the admin role. The same is done from the command line with sluice migrate --from URL, by an admin.'));
    return;
  }
  const url = h('input', { type: 'url', required: true, 'data-test': 'migrate-url', placeholder: 'http://connect:8083', value: ctx.query.get('url') || '' });
  const glob = h('input', { type: 'text', 'data-test': 'migrate-connectors', value: ctx.query.get('connectors') || '*', spellcheck: 'false' });
  const user = h('input', { type: 'text', 'data-test': 'migrate-user', autocomplete: 'off' });
  const password = h('input', { type: 'password', 'data-test': 'migrate-password', autocomplete: 'off' });
  const stopTimeout = h('input', { type: 'text', 'data-test': 'migrate-stop-timeout', placeholder: '2m', spellcheck: 'false' });
  const leaveStopped = h('input', { type: 'checkbox', 'data-test': 'migrate-leave-stopped' });
  const deleteSource = h('input', { type: 'checkbox', 'data-test': 'migrate-delete-source' });
  const error = h('div', { class: 'error', role: 'alert', 'data-test': 'migrate-error', hidden: true });
  const planEl = h('section', { 'aria-labelledby': 'migrate-plan-title', hidden: true });
  const resultsEl = h('section', { 'aria-labelledby': 'migrate-results-title', hidden: true });
  const dryBtn = h('button', { type: 'submit', class: 'primary', 'data-test': 'migrate-dry-run' }, 'Dry run');
  let plan = [];
  const picked = new Set();

  mount(ctx.root, h('div', { class: 'migrate' },
    h('h1', {}, 'Migrate from Kafka Connect'),
    h('p', {}, 'Moves connectors from a Kafka Connect cluster into Sluice with their positions: for each one the coordinator checks that a Sluice agent runs its class and that its config validates, stops it on Kafka Connect, reads its offsets, and creates it here at those offsets in the state it had. If a step fails, the connector is put back as it was on Kafka Connect.'),
    h('p', { class: 'muted' }, 'The coordinator reads Kafka Connect itself, only at the URLs its allowlist flag names, with its own credentials — never yours. Sluice and Kafka Connect must use the same Kafka cluster.'),
    h('form', { class: 'card', 'data-test': 'migrate-form', on: { submit: e => { e.preventDefault(); dryRun(); } } },
      h('div', { class: 'form-row' },
        field('Kafka Connect URL', url, 'Its REST API, as the coordinator reaches it.'),
        field('Connectors', glob, 'A glob over Kafka Connect\'s names: * ? [a-z].')),
      h('details', { class: 'more' }, h('summary', {}, 'Kafka Connect credentials and stop timeout'),
        h('div', { class: 'form-row three' },
          field('User', user, 'HTTP Basic, if Kafka Connect asks for it.'),
          field('Password', password, 'Sent to the coordinator for Kafka Connect only; never kept.'),
          field('Stop timeout', stopTimeout, 'How long each connector may take to stop there (a Go duration; 2m when empty, at most 10m).'))),
      h('div', { class: 'options' },
        h('label', { class: 'inline' }, leaveStopped, ' Create them STOPPED in Sluice'),
        h('label', { class: 'inline' }, deleteSource, ' Delete them on Kafka Connect once Sluice has them')),
      error, dryBtn),
    planEl, resultsEl));
  url.focus();

  function body(extra) {
    const b = { url: url.value.trim(), ...extra };
    if (user.value) { b.user = user.value; b.password = password.value; }
    if (stopTimeout.value.trim()) b.stop_timeout = stopTimeout.value.trim();
    if (leaveStopped.checked) b.leave_stopped = true;
    if (deleteSource.checked) b.delete_source = true;
    return b;
  }

  async function post(b) {
    return parse(await api.call('POST', ENDPOINT, undefined, { raw: true, text: stringify(b) }));
  }

  function showError(e) {
    const flag = /--[a-z0-9-]+/.exec(e.message || '');
    let lead = '';
    if (e.status === 404 && /\/sluice\/migrations|HTTP 404/.test(e.message)) lead = 'This coordinator does not have the migrations endpoint (POST /sluice/migrations): it is older than this console. Use sluice migrate --from URL from the command line.';
    else if (e.status === 403 && /allow/i.test(e.message)) lead = 'The coordinator may read only the Kafka Connect URLs its allowlist names. An operator of the coordinator adds this URL to that flag and restarts it:';
    mount(error, lead ? h('p', {}, lead) : null, h('p', {}, e.message), flag && e.status === 403 ? h('p', {}, 'Flag: ', h('code', {}, flag[0])) : null);
    error.hidden = false;
  }

  async function dryRun() {
    if (!url.reportValidity()) return;
    error.hidden = true;
    dryBtn.disabled = true;
    setQuery({ url: url.value.trim(), connectors: glob.value.trim() === '*' ? '' : glob.value.trim() });
    mount(planEl, h('p', { role: 'status' }, 'Reading Kafka Connect and checking each connector in Sluice (nothing is changed)…'), h('progress', { 'aria-label': 'Dry run in progress' }));
    planEl.hidden = false;
    resultsEl.hidden = true;
    try {
      plan = rowsOf(await post(body({ connectors: glob.value.trim() || '*', dry_run: true })));
      picked.clear();
      for (const r of plan) if (migratable(r)) picked.add(r.name);
      drawPlan();
    } catch (e) {
      planEl.hidden = true;
      showError(e);
    } finally {
      dryBtn.disabled = false;
    }
  }

  function drawPlan() {
    const open = new Set();
    const tbody = h('tbody');
    const applyBtn = h('button', { type: 'button', class: 'primary', 'data-test': 'migrate-apply', on: { click: apply } });
    const count = () => {
      applyBtn.textContent = `Migrate ${picked.size} selected`;
      applyBtn.disabled = !picked.size;
    };
    const draw = () => mount(tbody, plan.length ? plan.flatMap(r => {
      const can = migratable(r);
      const row = h('tr', { 'data-connector': r.name, class: can ? '' : 'skipped' },
        h('td', { class: 'pick' }, h('input', { type: 'checkbox', 'data-test': 'migrate-pick', checked: picked.has(r.name), disabled: !can, 'aria-label': `Migrate ${r.name}`,
          on: { change: e => { if (e.target.checked) picked.add(r.name); else picked.delete(r.name); count(); } } })),
        h('th', { scope: 'row' }, r.name),
        h('td', {}, r.type || '—'),
        h('td', { title: r.class || '' }, shortClass(r.class)),
        h('td', {}, r.state || '—'),
        h('td', { class: 'num' }, r.positions === null ? '—' : String(r.positions)),
        h('td', {}, r.result || '—', r.detail ? h('div', { class: 'muted small' }, r.detail) : null),
        h('td', {}, r.config || r.offsets ? h('button', { type: 'button', class: 'link', 'data-test': 'migrate-details', 'aria-expanded': String(open.has(r.name)),
          on: { click: () => { if (open.has(r.name)) open.delete(r.name); else open.add(r.name); draw(); } } }, open.has(r.name) ? 'Hide' : 'Config and positions') : null));
      return open.has(r.name) ? [row, h('tr', {}, h('td', { colspan: 8 }, details(r)))] : [row];
    }) : h('tr', {}, h('td', { colspan: 8, class: 'empty' }, 'No connector of Kafka Connect matches.')));
    draw();
    count();
    mount(planEl,
      h('h2', { id: 'migrate-plan-title' }, 'The plan'),
      h('p', { class: 'muted', role: 'status' }, `${plan.length} connector${plan.length === 1 ? '' : 's'} on Kafka Connect; ${plan.filter(migratable).length} can migrate. Nothing has changed yet.`),
      h('table', { class: 'grid', 'data-test': 'migrate-plan' },
        h('caption', { class: 'sr-only' }, 'Connectors of Kafka Connect and what a migration would do'),
        h('thead', {}, h('tr', {}, h('th', { scope: 'col', class: 'pick' }, h('span', { class: 'sr-only' }, 'Migrate')),
          ['Name', 'Type', 'Class', 'State', 'Positions', 'Plan', 'Details'].map(c => h('th', { scope: 'col' }, c)))),
        tbody),
      h('div', { class: 'toolbar' }, applyBtn));
  }

  async function apply() {
    const names = plan.filter(r => picked.has(r.name)).map(r => r.name);
    const n = names.length;
    const ok = await confirm(`Migrate ${n} connector${n === 1 ? '' : 's'}?`, h('div', {},
      h('p', {}, `Each is stopped on Kafka Connect, then created in Sluice at its positions${leaveStopped.checked ? ', STOPPED' : ' in the state it had'}.${deleteSource.checked ? ' Then it is deleted on Kafka Connect.' : ' It stays on Kafka Connect, STOPPED, for going back.'}`),
      h('ul', { class: 'names' }, names.map(x => h('li', {}, x)))), `Migrate ${n}`);
    if (!ok) return;
    // A second click would migrate them again: the plan is spent.
    for (const b of planEl.querySelectorAll('button, input')) b.disabled = true;
    const progress = h('progress', { max: n, value: 0, 'data-test': 'migrate-progress', 'aria-label': 'Connectors migrated' });
    const say = h('p', { role: 'status', 'aria-live': 'polite' });
    const tbody = h('tbody');
    mount(resultsEl, h('h2', { id: 'migrate-results-title', tabindex: '-1' }, 'Results'), say, progress,
      h('table', { class: 'grid', 'data-test': 'migrate-results' },
        h('caption', { class: 'sr-only' }, 'What happened to each connector'),
        h('thead', {}, h('tr', {}, ['Name', 'Type', 'Positions', 'State in Sluice', 'Result'].map(c => h('th', { scope: 'col' }, c)))),
        tbody));
    resultsEl.hidden = false;
    resultsEl.querySelector('h2').focus();
    let failed = 0;
    for (const [i, name] of names.entries()) {
      say.textContent = `Migrating ${name} (${i + 1} of ${n})…`;
      let rows;
      try {
        rows = rowsOf(await post(body({ connectors: literal(name) })));
        if (!rows.length) rows = [{ name, result: 'failed', detail: 'The coordinator answered no result for it (it may no longer exist on Kafka Connect).' }];
      } catch (e) {
        rows = [{ name, result: 'failed', detail: e.message }];
      }
      for (const r of rows) {
        const bad = /fail/i.test(r.result || '');
        if (bad) failed++;
        tbody.append(h('tr', { 'data-connector': r.name, 'data-result': (r.result || '').split(/[,:]/)[0].trim().replace(/\s+/g, '-'), class: bad ? 'failed' : '' },
          h('th', { scope: 'row' }, r.name), h('td', {}, r.type || '—'),
          h('td', { class: 'num' }, r.positions === null ? '—' : String(r.positions)), h('td', {}, r.state || '—'),
          h('td', { class: bad ? 'error' : 'ok' }, r.result || '—', r.step ? h('div', {}, `at step: ${r.step}`) : null,
            r.detail ? h('div', { class: 'small' }, r.detail) : null)));
      }
      progress.value = i + 1;
    }
    say.textContent = `Done: ${n - failed} of ${n} migrated${failed ? `, ${failed} failed — each failed one is back in its state on Kafka Connect unless its result says otherwise` : ''}. A new dry run shows what is left.`;
  }
}

// rowsOf reads the answer's connectors into {name, type, class, state,
// positions, result, detail, step, config, offsets}.
function rowsOf(res) {
  return ((res && res.connectors) || []).map(r => {
    const offsets = Array.isArray(r.offsets) ? r.offsets : null;
    const count = r.offsets_count !== undefined && r.offsets_count !== null ? Number(String(r.offsets_count)) : null;
    return {
      name: r.name, type: r.type, class: r.class, state: r.state, result: r.result, detail: r.detail, step: r.step,
      positions: count !== null ? count : offsets ? offsets.length : null, config: r.config, offsets,
    };
  });
}

// literal is a connector's name as a glob that matches it alone: the
// endpoint takes a glob (path.Match), and a name may hold * ? [ or \.
function literal(name) {
  return name.replace(/[*?[\]\\]/g, '\\$&');
}

function migratable(r) {
  return /^would migrate/i.test(r.result || '');
}

function details(r) {
  return h('div', { class: 'cards' },
    r.config ? h('div', {}, h('h3', {}, 'Config'), h('table', { class: 'diff' },
      h('tbody', {}, Object.keys(r.config).sort().map(k => h('tr', {}, h('th', { scope: 'row' }, k), h('td', {}, String(r.config[k]))))))) : null,
    r.offsets ? h('div', {}, h('h3', {}, `Positions to carry (${r.offsets.length})`), r.offsets.length ? h('table', { class: 'diff' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Partition'), h('th', { scope: 'col' }, 'Offset'))),
      h('tbody', {}, r.offsets.map(o => h('tr', {}, h('th', { scope: 'row' }, partitionCell(o.partition)), h('td', {}, offsetCell(o.offset))))))
      : h('p', { class: 'muted' }, 'None: it starts as a new connector would.')) : null);
}

function shortClass(cls) {
  if (!cls) return '—';
  const i = cls.lastIndexOf('.');
  return i < 0 ? cls : cls.slice(i + 1);
}
