// Building the page from data without ever parsing HTML: every string
// lands as text, so nothing a connector's name or config holds can run.

/**
 * h makes an element. props: class, text, on (event → handler), and any
 * other attribute (false/null/undefined leave it out). children: nodes,
 * strings, numbers, arrays of them, or null.
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === false || v === null || v === undefined) continue;
    if (k === 'class') el.className = Array.isArray(v) ? v.filter(Boolean).join(' ') : v;
    else if (k === 'text') el.textContent = v;
    else if (k === 'on') for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
    else if (k === 'value') el.value = v;
    else if (k === 'checked' || k === 'disabled' || k === 'selected') el[k] = !!v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** mount replaces el's children. */
export function mount(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** link is an in-console link (the router takes the click). */
export function link(href, text, props) {
  return h('a', { href, ...props }, text);
}

/** ago words a time as "12 s ago", "3 min ago", … */
export function ago(t) {
  if (!t) return '—';
  const d = (Date.now() - new Date(t).getTime()) / 1000;
  if (!isFinite(d)) return '—';
  if (d < 0) return 'just now';
  if (d < 60) return `${Math.floor(d)} s ago`;
  if (d < 3600) return `${Math.floor(d / 60)} min ago`;
  if (d < 86400) return `${Math.floor(d / 3600)} h ago`;
  return `${Math.floor(d / 86400)} d ago`;
}

/** when is a time as the user's locale shows it, with its ISO form in a title. */
export function when(t) {
  if (!t) return h('span', { class: 'muted' }, '—');
  const d = new Date(t);
  return h('time', { datetime: d.toISOString(), title: d.toISOString() }, d.toLocaleString());
}

/** num groups a number's digits. */
export function num(n) {
  return n === null || n === undefined ? '—' : Number(n).toLocaleString('en-US');
}

/** badge is a coloured state or health label. */
export function badge(word, title) {
  const w = String(word || 'unknown').toLowerCase();
  return h('span', { class: `badge b-${w.replace(/[^a-z]/g, '')}`, title }, w);
}

/** debounce calls fn once calls stop for ms. */
export function debounce(fn, ms) {
  let t;
  return (...a) => { clearTimeout(t); t = setTimeout(() => fn(...a), ms); };
}

/** field is a labelled form control. */
export function field(label, control, help) {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  control.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), control,
    help ? h('div', { class: 'help' }, help) : null);
}
