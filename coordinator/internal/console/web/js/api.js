// Every call of the console goes through the REST API with the session
// cookie; writes carry the session's CSRF token.

let session = { auth: false, signed_in: false };

/** ApiError is a REST error: its status and the API's message. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message || `HTTP ${status}`);
    this.status = status;
    this.code = code;
  }
}

/** current is the session GET /ui/session answered last. */
export function current() { return session; }

/** loadSession asks who is signed in. */
export async function loadSession() {
  session = await call('GET', '/ui/session');
  return session;
}

/** signIn opens a session with a user and password, or a token. */
export async function signIn(creds) {
  session = await call('POST', '/ui/session', creds);
  return session;
}

/** signOut closes the session. */
export async function signOut() {
  await call('DELETE', '/ui/session');
  session = { auth: true, signed_in: false };
}

const listeners = new Set();
/** onEvent calls fn with the API's events: offline/online, signed-out, leaderless. */
export function onEvent(fn) { listeners.add(fn); return () => listeners.delete(fn); }
function emit(ev) { for (const fn of listeners) fn(ev); }

/**
 * call sends a REST request and returns its parsed answer (null for 204).
 * opts: signal; headers (added to the request's, e.g. X-Sluice-Reason);
 * text (a body already encoded as JSON, sent instead of body: offsets keep
 * their numbers exactly as written); raw (answer with the response's text,
 * unparsed, for the same reason).
 */
export async function call(method, path, body, opts = {}) {
  const headers = { 'Accept': 'application/json', 'X-Sluice-Console': '1', ...opts.headers };
  const payload = opts.text !== undefined ? opts.text : body === undefined ? undefined : JSON.stringify(body);
  if (payload !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD' && session.csrf) headers['X-Sluice-CSRF'] = session.csrf;
  let res;
  try {
    res = await fetch(path, { method, headers, credentials: 'same-origin', signal: opts.signal, body: payload });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    emit({ type: 'offline', error: e });
    throw new ApiError(0, 0, `The coordinator did not answer: ${e.message}`);
  }
  emit({ type: 'online' });
  const text = await res.text();
  if (opts.raw && res.ok) return text;
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = text; }
  }
  if (!res.ok) {
    const msg = data && typeof data === 'object' && data.message ? data.message : `${method} ${path}: HTTP ${res.status}`;
    if (res.status === 401 && session.auth && !path.startsWith('/ui/session')) emit({ type: 'signed-out', message: msg });
    // A write while no leader is known: Kafka Connect's 409 "no known
    // leader URL" (or a 503 while Kafka is unreachable).
    if (method !== 'GET' && (res.status === 503 || res.status === 409 && /no known leader/.test(msg))) emit({ type: 'leaderless', message: msg });
    throw new ApiError(res.status, data && data.error_code, msg);
  }
  return data;
}

/** enc encodes a path segment (a connector's name may hold any character). */
export const enc = encodeURIComponent;

const roleRank = { viewer: 1, operator: 2, admin: 3 };

// glob is Go's path.Match for the patterns grants use: * ? and [...].
function glob(pattern, name) {
  let re = '^';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const j = pattern.indexOf(']', i + 1);
      if (j < 0) return false;
      let cls = pattern.slice(i + 1, j);
      if (cls.startsWith('^')) cls = '^' + cls.slice(1).replace(/\\/g, '\\\\');
      re += `[${cls.replace(/\\(?!\\)/g, '\\\\')}]`;
      i = j;
    } else if (c === '\\' && i + 1 < pattern.length) re += pattern[++i].replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    else re += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  try { return new RegExp(re + '$').test(name); } catch { return false; }
}

/**
 * can says whether the signed-in principal holds role (for connector, when
 * given): the console shows only the buttons it may use. The server checks
 * again; a grant over tenants is taken to cover every connector here (the
 * console does not know tenants), and the server refuses what it does not.
 */
export function can(role, connector) {
  if (!session.auth) return true;
  if (!session.signed_in) return false;
  return (session.principal.grants || []).some(g => {
    if (roleRank[g.role] < roleRank[role]) return false;
    if (connector === undefined || (g.tenants && g.tenants.length)) return true;
    if (!g.connectors || !g.connectors.length) return true;
    return g.connectors.some(p => glob(p, connector));
  });
}

/** unrestricted says whether the principal holds role over every connector. */
export function unrestricted(role) {
  if (!session.auth) return true;
  if (!session.signed_in) return false;
  return (session.principal.grants || []).some(g => roleRank[g.role] >= roleRank[role]
    && !(g.connectors && g.connectors.length) && !(g.tenants && g.tenants.length));
}
