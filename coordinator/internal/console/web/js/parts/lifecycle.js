// A connector's state changes as the guided flows make them: stop it and
// wait until it shows STOPPED, put it back in the state it had and wait
// until it shows that. The waits poll GET /connectors/{name}/status, as
// the CLI's --wait does.

import * as api from '../api.js';

/** status is GET /connectors/{name}/status. */
export function status(name) {
  return api.call('GET', `/connectors/${api.enc(name)}/status`);
}

/**
 * wanted is the state a connector is meant to be in, from its status:
 * RUNNING, PAUSED or STOPPED (a FAILED, UNASSIGNED or RESTARTING one is
 * meant to run).
 */
export function wanted(st) {
  const s = st && st.connector ? st.connector.state : '';
  return s === 'PAUSED' || s === 'STOPPED' ? s : 'RUNNING';
}

const POLL_MS = 500;
const WAIT_MS = 60000;

/**
 * waitFor polls the status until the connector shows state (STOPPED: with
 * no tasks; RUNNING or PAUSED: its tasks too), calling tick(status) at
 * each poll; it throws when a task or the connector fails on the way, or
 * after a minute.
 */
export async function waitFor(name, state, tick) {
  const end = Date.now() + WAIT_MS;
  let polls = 0;
  let last = null;
  for (;;) {
    last = await status(name);
    polls++;
    if (tick) tick(last);
    const c = last.connector || {};
    const tasks = last.tasks || [];
    if (state === 'STOPPED') {
      if (c.state === 'STOPPED' && !tasks.length) return last;
    } else {
      const failed = c.state === 'FAILED' ? c : tasks.find(t => t.state === 'FAILED');
      if (failed) throw new Error(`${failed.id === undefined ? 'the connector' : `task ${failed.id}`} FAILED${failed.trace ? `: ${firstLine(failed.trace)}` : ''}`);
      // A connector with no task yet may be about to get them: a few
      // polls tell that from one that has none.
      if (c.state === state && tasks.every(t => t.state === state) && (tasks.length || polls >= 4)) return last;
    }
    if (Date.now() > end) throw new Error(`it still shows ${describe(last)} after ${WAIT_MS / 1000} s`);
    await new Promise(r => setTimeout(r, POLL_MS));
  }
}

/** stop is PUT /connectors/{name}/stop (it answers once the stop is durable). */
export function stop(name) {
  return api.call('PUT', `/connectors/${api.enc(name)}/stop`);
}

/** putBack asks for state again: RUNNING resumes, PAUSED pauses, STOPPED does nothing. */
export async function putBack(name, state) {
  if (state === 'RUNNING') await api.call('PUT', `/connectors/${api.enc(name)}/resume`);
  else if (state === 'PAUSED') await api.call('PUT', `/connectors/${api.enc(name)}/pause`);
}

/** describe words a status: "RUNNING, 2 of 2 tasks RUNNING". */
export function describe(st) {
  const c = (st && st.connector) || {};
  const tasks = (st && st.tasks) || [];
  if (!tasks.length) return `${c.state || 'no state'}, no tasks`;
  const same = tasks.filter(t => t.state === c.state).length;
  return `${c.state}, ${same} of ${tasks.length} task${tasks.length === 1 ? '' : 's'} ${c.state}`;
}

function firstLine(s) {
  return String(s).split('\n')[0].slice(0, 300);
}
