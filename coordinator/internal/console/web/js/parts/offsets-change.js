// Every offsets change the console makes goes through runChange: always
// dry run → diff → apply → result. Positions change only on a STOPPED
// connector (the API refuses otherwise, with Kafka Connect's message), so
// for a running or paused one the flow is "stop, change, put back": stop
// → wait for STOPPED → dry run → diff → apply → resume (or pause) → wait.
// Each step is shown; the one that fails is named with the API's message,
// and nothing after it is done. A connector the flow stopped is left
// stopped when the change fails or is cancelled, said so, with a button
// to put it back.
//
// Stable hooks (see flowdialog.js for the dialog's): data-test=
// change-start, change-apply, change-cancel, change-cancel-resume,
// change-force, change-put-back, change-close; input[data-test=
// change-reason], input[data-test=change-confirm]; data-step= stop,
// stopped, dry-run, review, apply, resume, running.

import { h, mount, field } from '../dom.js';
import { openFlow, button } from './flowdialog.js';
import { diffTable, moved } from './offsets-diff.js';
import * as life from './lifecycle.js';

/**
 * runChange runs one offsets change on connector name as a guided flow.
 * plan: {flow, title, intro (node), preview({force}) → {changes},
 * apply(reason, {force}) → {changes?, history_id?, message?}, applyLabel,
 * confirmWord (typed to unlock Apply, for what cannot be taken back),
 * forceable (a 409 of the dry run offers to force)}. It resolves with
 * {applied, historyId} once the dialog is closed.
 */
export async function runChange(name, plan) {
  let st;
  try {
    st = await life.status(name);
  } catch (e) {
    st = null; // the flow's first step says why
  }
  const before = st ? life.wanted(st) : 'STOPPED';
  const guided = before !== 'STOPPED';
  const back = before === 'PAUSED' ? 'pause it again' : 'resume it';
  const steps = [
    ...(guided ? [{ key: 'stop', label: 'Stop the connector' }, { key: 'stopped', label: 'Wait until it shows STOPPED' }] : []),
    { key: 'dry-run', label: 'Dry run' },
    { key: 'review', label: 'Review the changes' },
    { key: 'apply', label: 'Apply' },
    ...(guided ? [{ key: 'resume', label: before === 'PAUSED' ? 'Pause it again' : 'Resume it' },
      { key: 'running', label: `Wait until it shows ${before}` }] : []),
  ];
  const f = openFlow(plan.flow, plan.title, steps);
  const out = { applied: false, historyId: '' };
  let stoppedByUs = false;
  let force = false;

  // step runs one step: marks it active, then done or failed with the
  // API's message; a failure ends the flow there.
  async function step(key, what, fn, failed = what) {
    f.step(key, 'active');
    f.status(what);
    f.busy(true);
    try {
      const v = await fn();
      f.step(key, 'done');
      return v;
    } catch (e) {
      // The step names the API's message; the status line, read out,
      // says what failed and that nothing after it was done.
      f.step(key, 'failed', e.message);
      f.status(`${failed} failed. Nothing after this step was done.`, 'error', e.message);
      throw e;
    } finally {
      f.busy(false);
    }
  }

  function leftStopped(why) {
    // The change's own steps after the one that failed will not run.
    for (const k of ['dry-run', 'review', 'apply']) if (['', 'active'].includes(f.stateOf(k))) f.step(k, 'skipped');
    const putBackBtn = button(before === 'PAUSED' ? 'Pause it again' : 'Resume it', 'change-put-back', () => putBack(), 'primary');
    mount(f.body, why, h('p', { class: 'notice warn', 'data-test': 'left-stopped' },
      `${name} is left STOPPED, ${out.applied ? 'at its new positions' : 'its positions unchanged'}: ${back} when you are ready.`));
    f.actions(button('Close', 'change-close', () => f.close(out)), putBackBtn);
  }

  async function putBack() {
    try {
      await step('resume', before === 'PAUSED' ? 'Pausing it again' : 'Resuming it', () => life.putBack(name, before));
      await step('running', `Waiting until it shows ${before}`, () => life.waitFor(name, before, s => f.status(`It shows ${life.describe(s)}…`)));
      f.status(`${name} is ${before} again.`, 'ok');
      if (!out.applied) mount(f.body);
      f.actions(button('Close', 'change-close', () => f.close(out), 'primary'));
    } catch (e) {
      f.actions(button('Close', 'change-close', () => f.close(out)), button('Try again', 'change-put-back', () => putBack(), 'primary'));
    }
  }

  async function start() {
    if (guided) {
      try {
        await step('stop', 'Stopping the connector', () => life.stop(name));
        stoppedByUs = true;
        await step('stopped', 'Waiting until it shows STOPPED', () => life.waitFor(name, 'STOPPED', s => f.status(`It shows ${life.describe(s)}…`)));
      } catch (e) {
        mount(f.body);
        return stoppedByUs ? leftStopped(null) : f.actions(button('Close', 'change-close', () => f.close(out), 'primary'));
      }
    }
    await dryRun();
  }

  async function dryRun() {
    let res;
    try {
      res = await step('dry-run', 'Asking the API what would change (nothing is written)', () => plan.preview({ force }), 'The dry run');
    } catch (e) {
      const offer = plan.forceable && e.status === 409 && !force;
      const why = offer ? h('p', {}, 'Forcing puts the entry\'s positions back even so; the dry run with force shows what that would change.') : null;
      if (offer) {
        mount(f.body, why);
        f.actions(button('Cancel', 'change-cancel', () => cancel()),
          button('Dry run with force', 'change-force', () => { force = true; f.step('dry-run', ''); dryRun(); }, 'primary'));
        return;
      }
      return stoppedByUs ? leftStopped(why) : (mount(f.body, why), f.actions(button('Close', 'change-close', () => f.close(out), 'primary')));
    }
    review(res.changes || []);
  }

  function review(changes) {
    f.step('review', 'active');
    const n = moved(changes);
    f.status(n ? `Dry run done: ${n} partition${n === 1 ? '' : 's'} would change. Review, then apply.` : 'Dry run done: nothing would change.');
    const reason = h('input', { type: 'text', maxlength: 1024, 'data-test': 'change-reason', placeholder: 'e.g. skip the poison record, INC-4411' });
    const typed = plan.confirmWord ? h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', 'data-test': 'change-confirm' }) : null;
    const applyBtn = button(plan.applyLabel || 'Apply', 'change-apply', () => apply(reason.value.trim(), changes), plan.confirmWord ? 'danger' : 'primary');
    const gate = () => {
      const off = (typed && typed.value !== plan.confirmWord) || (!n && !plan.confirmWord);
      applyBtn.disabled = off;
      applyBtn.dataset.off = off ? '1' : '';
    };
    if (typed) typed.addEventListener('input', gate);
    mount(f.body,
      plan.intro || null,
      diffTable(changes, 'would change', 'What the change would do: positions before and after'),
      field('Reason (kept in the offsets history)', reason),
      typed ? field(`Type ${plan.confirmWord} to confirm`, typed, 'This cannot be taken back except by undoing it from the offsets history.') : null);
    f.actions(
      button(stoppedByUs ? 'Cancel, leave it stopped' : 'Cancel', 'change-cancel', () => cancel()),
      stoppedByUs ? button(`Cancel and ${back}`, 'change-cancel-resume', () => { f.step('review', ''); f.step('apply', 'skipped'); mount(f.body); putBack(); }) : null,
      applyBtn);
    gate();
    (typed || reason).focus();
  }

  async function apply(reason, previewed) {
    f.step('review', 'done');
    let res;
    try {
      res = await step('apply', 'Applying the change', () => plan.apply(reason, { force }), 'The change');
    } catch (e) {
      const why = h('p', {}, 'The API changes all of the positions or none: nothing was changed.');
      return stoppedByUs ? leftStopped(why) : (mount(f.body, why), f.actions(button('Close', 'change-close', () => f.close(out), 'primary')));
    }
    out.applied = true;
    out.historyId = res.history_id || '';
    const changes = res.changes || previewed;
    const result = h('div', { 'data-test': 'change-result' },
      h('p', { class: 'ok' }, sentence(res.message || 'Applied.'), out.historyId ? [' Offsets history entry ', h('code', { 'data-test': 'history-id' }, out.historyId), '.'] : null),
      diffTable(changes, 'changed', 'What the change did: positions before and after'));
    mount(f.body, result);
    if (!stoppedByUs) {
      f.status('Applied.', 'ok');
      f.actions(button('Close', 'change-close', () => f.close(out), 'primary'));
      return;
    }
    await putBack();
  }

  function cancel() {
    f.step('review', '');
    f.status(stoppedByUs ? `Cancelled: nothing was changed, and ${name} stays STOPPED.` : 'Cancelled: nothing was changed.');
    if (stoppedByUs) return leftStopped(null);
    f.close(out);
  }

  if (guided) {
    mount(f.body,
      plan.intro || null,
      h('p', {}, `${name} is ${st.connector.state}. Positions change only on a STOPPED connector, so the console stops it, `,
        `shows you what would change, applies it once you say so, and then will ${back}. If a step fails, nothing after it is done.`));
    f.actions(button('Cancel', 'change-cancel', () => f.close(out)), button('Stop and continue', 'change-start', () => start(), 'primary'));
  } else {
    start();
  }
  return f.closed.then(v => v || out);
}

// sentence ends a message with a full stop, for another to follow it.
function sentence(s) {
  return /[.!?]$/.test(s) ? s : `${s}.`;
}
