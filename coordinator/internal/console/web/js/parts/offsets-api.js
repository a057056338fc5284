// The offsets endpoints the console calls (docs/offsets.md), in one place.
// Positions are read and written as exact JSON (json.js), so a partition
// or offset goes back to the server exactly as the server wrote it. A
// change carries the user's reason in X-Sluice-Reason, which the API
// keeps in the change's offsets history entry.

import * as api from '../api.js';
import { parse, stringify } from './json.js';

const base = name => `/connectors/${api.enc(name)}/offsets`;
const own = name => `/sluice/connectors/${api.enc(name)}/offsets`;
const reasonHeader = reason => (reason ? { 'X-Sluice-Reason': reason } : {});

async function exact(method, path, body, reason) {
  const opts = { raw: true, headers: reasonHeader(reason) };
  if (body !== undefined) opts.text = stringify(body);
  const text = await api.call(method, path, undefined, opts);
  return text ? parse(text) : null;
}

/** positions is GET /connectors/{name}/offsets: [{partition, offset}]. */
export async function positions(name) {
  const res = await exact('GET', base(name));
  return (res && res.offsets) || [];
}

/** lag is a sink's GET /sluice/connectors/{name}/lag, or null when it cannot be read. */
export async function lag(name) {
  try {
    return await api.call('GET', `/sluice/connectors/${api.enc(name)}/lag`);
  } catch {
    return null; // lag is extra information: the positions stand without it
  }
}

/** previewAlter is what PATCH would do: POST …/offsets/preview {offsets}. */
export function previewAlter(name, offsets) {
  return exact('POST', `${own(name)}/preview`, { offsets });
}

/** previewReset is what DELETE would do: POST …/offsets/preview {"reset": true}. */
export function previewReset(name) {
  return exact('POST', `${own(name)}/preview`, { reset: true });
}

/**
 * alter is PATCH /connectors/{name}/offsets (Kafka Connect's: it answers
 * a message only), then the history entry it made.
 */
export async function alter(name, offsets, reason) {
  const res = await exact('PATCH', base(name), { offsets }, reason);
  return { message: res && res.message, history_id: await newest(name, 'alter') };
}

/** resetAll is DELETE /connectors/{name}/offsets, then the history entry it made. */
export async function resetAll(name, reason) {
  const res = await exact('DELETE', base(name), undefined, reason);
  return { message: res && res.message, history_id: await newest(name, 'reset') };
}

/** resetTo is POST …/offsets/reset with one rule (docs/offsets.md); dryRun changes nothing. */
export function resetTo(name, rule, dryRun, reason) {
  return exact('POST', `${own(name)}/reset`, { ...rule, dry_run: dryRun }, reason);
}

/**
 * restore is POST …/offsets/restore: body {from, entry?, positions}
 * writes the positions an entry of from's history recorded; dryRun
 * changes nothing.
 */
export function restore(name, body, dryRun, reason) {
  return exact('POST', `${own(name)}/restore`, { ...body, dry_run: dryRun }, reason);
}

/** history is one page of GET …/offsets/history, newest first. */
export function history(name, before) {
  const q = new URLSearchParams({ limit: '20' });
  if (before) q.set('before', before);
  return exact('GET', `${own(name)}/history?${q}`);
}

/** undo is POST …/history/{id}/undo; dryRun changes nothing, force ignores later moves. */
export function undo(name, id, { dryRun, force }, reason) {
  const q = new URLSearchParams();
  if (dryRun) q.set('dry_run', 'true');
  if (force) q.set('force', 'true');
  return exact('POST', `${own(name)}/history/${api.enc(id)}/undo${q.size ? `?${q}` : ''}`, undefined, reason);
}

// newest is the id of the connector's newest history entry when it is of
// operation: Kafka Connect's PATCH and DELETE answer only a message, and
// the entry they made is the newest one right after they answer.
async function newest(name, operation) {
  try {
    const page = await history(name);
    const e = page && page.entries && page.entries[0];
    return e && e.operation === operation ? e.id : '';
  } catch {
    return ''; // the change is made; only its entry's id is not shown
  }
}
