// JSON that keeps its numbers exactly as written. Offsets and source
// partitions are compared by their decoded JSON values on the server,
// where 5.0 is not 5 and an integer may exceed 2^53: a round trip through
// JavaScript numbers would change them, and a partition sent back changed
// is another partition. So numbers stay Num objects holding their text.

/** Num is a JSON number as its text. */
export class Num {
  constructor(text) { this.text = text; }
  toString() { return this.text; }
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const SPACE = /[ \t\n\r]*/y;

/**
 * parse reads JSON text into plain objects, arrays, strings, booleans,
 * null and Num; it throws an Error naming the position of what is wrong.
 */
export function parse(text) {
  let i = 0;
  const skip = () => { SPACE.lastIndex = i; SPACE.exec(text); i = SPACE.lastIndex; };
  const fail = what => { throw new Error(`not JSON: ${what} at character ${i + 1}`); };
  const token = re => { re.lastIndex = i; const m = re.exec(text); if (!m) return null; i = re.lastIndex; return m[0]; };
  function value() {
    skip();
    const c = text[i];
    if (c === '{') {
      i++;
      const out = {};
      skip();
      if (text[i] === '}') { i++; return out; }
      for (;;) {
        skip();
        const k = token(STRING);
        if (k === null) fail('expected a quoted key');
        skip();
        if (text[i] !== ':') fail('expected ":"');
        i++;
        out[JSON.parse(k)] = value();
        skip();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === '}') { i++; return out; }
        fail('expected "," or "}"');
      }
    }
    if (c === '[') {
      i++;
      const out = [];
      skip();
      if (text[i] === ']') { i++; return out; }
      for (;;) {
        out.push(value());
        skip();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === ']') { i++; return out; }
        fail('expected "," or "]"');
      }
    }
    if (c === '"') {
      const s = token(STRING);
      if (s === null) fail('a string that does not end or holds a raw control character');
      return JSON.parse(s);
    }
    for (const [word, v] of [['true', true], ['false', false], ['null', null]]) {
      if (text.startsWith(word, i)) { i += word.length; return v; }
    }
    const n = token(NUMBER);
    if (n === null) fail(i >= text.length ? 'the text ends too early' : `unexpected "${text[i]}"`);
    return new Num(n);
  }
  const v = value();
  skip();
  if (i < text.length) fail(`unexpected "${text[i]}" after the value`);
  return v;
}

/**
 * stringify writes a value parse made (plain JavaScript numbers too) as
 * JSON; with indent, pretty-printed by that many spaces per level.
 */
export function stringify(v, indent = 0) {
  const nl = indent ? '\n' : '';
  const sep = indent ? ': ' : ':';
  function write(x, pad) {
    if (x instanceof Num) return x.text;
    if (x === null || x === undefined) return 'null';
    if (Array.isArray(x)) {
      if (!x.length) return '[]';
      const inner = pad + ' '.repeat(indent);
      return `[${nl}${x.map(e => inner + write(e, inner)).join(`,${nl}`)}${nl}${pad}]`;
    }
    if (typeof x === 'object') {
      const keys = Object.keys(x);
      if (!keys.length) return '{}';
      const inner = pad + ' '.repeat(indent);
      return `{${nl}${keys.map(k => `${inner}${JSON.stringify(k)}${sep}${write(x[k], inner)}`).join(`,${nl}`)}${nl}${pad}}`;
    }
    return JSON.stringify(x);
  }
  return write(v, '');
}

/** equal compares two values parse made: numbers by their text, objects by their keys in any order. */
export function equal(a, b) {
  if (a instanceof Num || b instanceof Num) return a instanceof Num && b instanceof Num && a.text === b.text;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every(k => Object.prototype.hasOwnProperty.call(b, k) && equal(a[k], b[k]));
}

/** isObject says whether v is a JSON object (not an array, not null). */
export function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Num);
}
