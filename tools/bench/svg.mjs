// Plain SVG for the benchmark scripts (issue 44, "Curves as pictures"): line panels (small multiples, each with its
// own y axis) and grouped bar panels, with axis ticks, a title and a legend. No dependencies; the same figures give
// the same bytes (numbers rounded to one decimal, elements in input order, no dates or random ids).

export const COLORS = ['#1f6feb', '#8c959f', '#bf8700', '#1a7f37', '#8250df'];
export const RED = '#d1242f';

/** Text made safe inside an SVG element or attribute. */
export function esc(text) {
  return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A coordinate or value rounded to one decimal, without a trailing `.0` (and never `-0`). */
export function num(v) {
  const r = Math.round(v * 10) / 10;
  return String(r === 0 ? 0 : r);
}

/** The tick step for an axis from 0 to `max`: 1, 2 or 5 times a power of ten, at most `most` steps. */
export function niceStep(max, most = 6) {
  if (!(max > 0)) return 1;
  const base = 10 ** Math.floor(Math.log10(max / most));
  return [1, 2, 5, 10].map((m) => m * base).find((s) => max / s <= most);
}

/** The ticks of an axis from 0 up to `max` (inclusive when it falls on a step), one `step` apart. */
export function ticks(max, step = niceStep(max)) {
  const out = [];
  // Counted in steps, so that 0.1 + 0.2 never drifts past a tick.
  for (let i = 0; i * step <= max * (1 + 1e-9); i++) out.push(Number((i * step).toPrecision(12)));
  return out;
}

/** An SVG document of the given size on a white ground; ends with a newline. */
export function svgDocument(width, height, parts) {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${num(width)}" height="${num(height)}" font-family="sans-serif">`,
    '<rect width="100%" height="100%" fill="white"/>',
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}

/** A text element; `attrs` are extra attributes (`{ 'text-anchor': 'end' }`). */
export function text(x, y, content, size = 11, attrs = {}) {
  const extra = Object.entries(attrs)
    .map(([k, v]) => ` ${k}="${esc(v)}"`)
    .join('');
  return `<text x="${num(x)}" y="${num(y)}" font-size="${size}"${extra}>${esc(content)}</text>`;
}

/** A row of colour swatches and labels from (x, y); each item is `{ label, color }`. */
export function legend(x, y, items) {
  const parts = [];
  let at = x;
  for (const { label, color } of items) {
    parts.push(
      `<rect x="${num(at)}" y="${num(y - 9)}" width="10" height="10" fill="${color}"/>`,
      text(at + 14, y, label),
    );
    at += 14 + 7 * String(label).length + 16;
  }
  return parts.join('\n');
}

/** The title, the y grid at `yTicks` with their labels and the axis lines of a plot area; `Y` maps a value to its y. */
function frame({ left, top, width, height, title, yTicks, Y, yFormat = num }) {
  const parts = [
    text(left, top - 15, title, 14),
    `<path d="M${num(left)},${num(top)}V${num(top + height)}H${num(left + width)}" fill="none" stroke="#333"/>`,
  ];
  for (const v of yTicks) {
    parts.push(
      text(left - 6, Y(v), yFormat(v), 11, { 'text-anchor': 'end', dy: '4' }),
      `<path d="M${num(left)},${num(Y(v))}H${num(left + width)}" stroke="#ddd"/>`,
    );
  }
  return parts;
}

/**
 * One line panel at (x, y) of the document: `series` are `{ points: [[x, y], ...], color }` (each point a dot with
 * its value), `targets` `[[x, y], ...]` red crosses labelled "target y". The x axis runs from 0 to `xMax` with a tick
 * every `xStep` (labelled by `xFormat`), the y axis from 0 to 15 % above the largest value.
 */
export function linePanel({
  x = 0,
  y = 0,
  width = 330,
  height = 220,
  title,
  xLabel,
  xMax,
  xStep = niceStep(xMax),
  xFormat = num,
  series,
  targets = [],
}) {
  const [left, top] = [x + 50, y + 40];
  const values = [...series.flatMap((s) => s.points), ...targets].map((p) => p[1]);
  const yMax = Math.max(1, ...values) * 1.15;
  const X = (v) => left + (v / xMax) * width;
  const Y = (v) => top + height - (v / yMax) * height;
  const yTicks = ticks(yMax).filter((v) => v < yMax);
  const parts = frame({ left, top, width, height, title, yTicks, Y });
  for (const v of ticks(xMax, xStep))
    parts.push(text(X(v), top + height + 16, xFormat(v), 11, { 'text-anchor': 'middle' }));
  for (const { points, color = COLORS[0] } of series) {
    const line = points.map(([a, b]) => `${num(X(a))},${num(Y(b))}`).join(' ');
    parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${line}"/>`);
    for (const [a, b] of points)
      parts.push(
        `<circle cx="${num(X(a))}" cy="${num(Y(b))}" r="3.5" fill="${color}"/>`,
        text(X(a), Y(b), num(b), 11, { dx: '6', dy: '-6' }),
      );
  }
  for (const [a, b] of targets)
    parts.push(
      `<path d="M${num(X(a) - 5)},${num(Y(b) - 5)}l10,10m0,-10l-10,10" stroke="${RED}" stroke-width="2"/>`,
      text(X(a), Y(b), `target ${num(b)}`, 11, { dx: '-8', dy: '-8', fill: RED, 'text-anchor': 'end' }),
    );
  if (xLabel) parts.push(text(left + width / 2, top + height + 34, xLabel, 12, { 'text-anchor': 'middle' }));
  return parts.join('\n');
}

/**
 * One grouped bar panel at (x, y): a group per `groups` entry (`{ label, values }`, a value per `series` entry, null
 * for none), bars coloured as `series` (`{ label, color }`); the y axis from 0 to `yMax` (default: 10 % above the
 * largest value). `valueLabels`: each bar's value above it.
 */
export function barPanel({
  x = 0,
  y = 0,
  width,
  height = 200,
  title,
  groups,
  series,
  yMax,
  yStep,
  yFormat = num,
  valueLabels = false,
  valueFormat = num,
}) {
  const [left, top] = [x + 50, y + 40];
  const values = groups.flatMap((g) => g.values).filter((v) => typeof v === 'number');
  const yTop = yMax ?? Math.max(1e-9, ...values) * 1.1;
  const Y = (v) => top + height - (v / yTop) * height;
  const parts = frame({ left, top, width, height, title, yTicks: ticks(yTop, yStep ?? niceStep(yTop)), Y, yFormat });
  const groupWidth = width / Math.max(1, groups.length);
  const barWidth = (groupWidth * 0.8) / Math.max(1, series.length);
  groups.forEach((g, i) => {
    const start = left + i * groupWidth + groupWidth * 0.1;
    g.values.forEach((v, j) => {
      if (typeof v !== 'number') return;
      const bx = start + j * barWidth;
      const color = series[j]?.color ?? COLORS[j % COLORS.length];
      parts.push(
        `<rect x="${num(bx)}" y="${num(Y(v))}" width="${num(barWidth - 1)}" height="${num(top + height - Y(v))}" fill="${color}"/>`,
      );
      if (valueLabels) parts.push(text(bx + barWidth / 2, Y(v) - 3, valueFormat(v), 10, { 'text-anchor': 'middle' }));
    });
    parts.push(text(left + (i + 0.5) * groupWidth, top + height + 16, g.label, 11, { 'text-anchor': 'middle' }));
  });
  return parts.join('\n');
}
