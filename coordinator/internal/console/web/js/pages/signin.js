// Sign in with what the REST API accepts: a user and password, or a
// token (a bearer token of the auth file, or a JWT pasted whole).

import { h, mount, field } from '../dom.js';
import * as api from '../api.js';
import { go } from '../router.js';
import { renderWho, REASON } from '../main.js';

export async function render(ctx) {
  document.title = 'Sign in · Sluice';
  const s = api.current();
  const next = ctx.query.get('next') || '/ui/';
  const safeNext = next.startsWith('/ui/') ? next : '/ui/';
  if (!s.auth || s.signed_in) { go(safeNext, { replace: true }); return; }
  const reason = sessionStorage.getItem(REASON);
  sessionStorage.removeItem(REASON);
  const error = h('p', { class: 'error', role: 'alert', id: 'signin-error' }, reason || '');
  if (!reason) error.hidden = true;
  let mode = 'password';
  const user = h('input', { name: 'user', autocomplete: 'username', required: true });
  const password = h('input', { name: 'password', type: 'password', autocomplete: 'current-password' });
  const token = h('textarea', { name: 'token', rows: 4, spellcheck: 'false', autocomplete: 'off' });
  const pwFields = h('div', {}, field('User', user), field('Password', password));
  const tokenFields = h('div', { hidden: true }, field('Token or JWT', token, 'A bearer token of the auth file, or a JWT from your identity provider.'));
  const tabs = h('div', { class: 'segmented', role: 'group', 'aria-label': 'Sign in with' },
    h('button', { type: 'button', 'aria-pressed': 'true', on: { click: e => pick('password', e.target) } }, 'Password'),
    h('button', { type: 'button', 'aria-pressed': 'false', on: { click: e => pick('token', e.target) } }, 'Token or JWT'));
  function pick(m, btn) {
    mode = m;
    for (const b of tabs.children) b.setAttribute('aria-pressed', String(b === btn));
    pwFields.hidden = m !== 'password';
    tokenFields.hidden = m !== 'token';
    user.required = m === 'password';
    (m === 'password' ? user : token).focus();
  }
  const submit = h('button', { class: 'primary', type: 'submit' }, 'Sign in');
  const form = h('form', { class: 'card signin', on: { submit: async e => {
    e.preventDefault();
    submit.disabled = true;
    error.hidden = true;
    try {
      await api.signIn(mode === 'password' ? { user: user.value, password: password.value } : { token: token.value.trim() });
      renderWho();
      go(safeNext, { replace: true });
    } catch (err) {
      error.textContent = err.message;
      error.hidden = false;
      submit.disabled = false;
    }
  } } },
  h('h1', {}, 'Sign in to Sluice'), tabs, pwFields, tokenFields, error, submit);
  mount(ctx.root, form);
  user.focus();
}
