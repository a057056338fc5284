// A sparkline: a small inline SVG of a series over time, drawn with DOM
// SVG elements (no library, no markup parsed from strings).

const NS = 'http://www.w3.org/2000/svg';

function svg(tag, attrs) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  return el;
}

/**
 * seconds reads a sample's time as Unix seconds: numbers in seconds or
 * milliseconds, or a date string.
 */
export function seconds(t) {
  if (typeof t === 'number') return t > 1e11 ? t / 1000 : t;
  const ms = Date.parse(t);
  return Number.isFinite(ms) ? ms / 1000 : NaN;
}

/**
 * sparkline draws samples [[time, value], …] (oldest first) over the
 * window [now - spanSeconds, now], or from the first sample when that is
 * later: a line, the last value as a dot. label
 * names the series for assistive technology; the picture's own text
 * alternative says the range and the last value.
 */
export function sparkline(samples, { label = 'Series', width = 140, height = 28, spanSeconds = 3600, now = Date.now() / 1000 } = {}) {
  const pts = (samples || []).map(([t, v]) => [seconds(t), Number(v)]).filter(([t, v]) => Number.isFinite(t) && Number.isFinite(v));
  const root = svg('svg', { class: 'spark', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img' });
  if (!pts.length) {
    root.setAttribute('aria-label', `${label}: no samples yet`);
    const base = svg('line', { x1: 0, x2: width, y1: height - 2, y2: height - 2, class: 'spark-none' });
    root.append(base);
    return root;
  }
  const vals = pts.map(p => p[1]);
  const max = Math.max(...vals);
  const min = Math.min(...vals);
  const last = vals[vals.length - 1];
  // A young history (the leader started sampling minutes ago) spans what
  // it has, not an hour of which it would fill the last sliver.
  const from = Math.max(now - spanSeconds, Math.min(pts[0][0], now - 60));
  const span = now - from;
  const pad = 2;
  const x = t => pad + Math.max(0, Math.min(1, (t - from) / span)) * (width - 2 * pad);
  // A flat series sits at the bottom when it is zero, mid-height otherwise.
  const y = v => max === min ? (max === 0 ? height - pad : height / 2) : pad + (1 - (v - min) / (max - min)) * (height - 2 * pad);
  const d = pts.map(([t, v], i) => `${i ? 'L' : 'M'}${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
  const title = svg('title');
  title.textContent = `${label}: now ${last.toLocaleString('en-US')}, lowest ${min.toLocaleString('en-US')}, highest ${max.toLocaleString('en-US')} over the last ${Math.round(span / 60)} min (${pts.length} samples)`;
  root.setAttribute('aria-label', title.textContent);
  root.append(title, svg('path', { d }), svg('circle', { cx: x(pts[pts.length - 1][0]).toFixed(1), cy: y(last).toFixed(1), r: 2, class: 'spark-dot' }));
  return root;
}
