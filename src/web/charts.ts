import { type Html, html } from './html.ts';

/**
 * Inline SVG charts, drawn here (no charting library). Each is an `img` with an accessible name
 * that states the figures; bars also carry a <title> per bar for pointer users.
 */

const n = (v: number) => (Math.round(v * 10) / 10).toString();

/**
 * A small line of values (oldest first), e.g. flaky tests per day, from 0 (bottom) to the series' own
 * highest value (top), which is written at its top left so a line of small values still reads.
 */
export function sparkline(
  values: readonly number[],
  label: string,
  tone: 'flaky' | 'broken' | 'quarantined',
): Html {
  const width = 132;
  const height = 32;
  const left = 20;
  const max = Math.max(0, ...values);
  const scale = Math.max(1, max);
  const step = values.length > 1 ? (width - left - 4) / (values.length - 1) : 0;
  const y = (v: number) => height - 4 - (v / scale) * (height - 8);
  const points = values.map((v, i) => `${n(left + i * step)},${n(y(v))}`);
  const last = points.at(-1)?.split(',') ?? ['0', '0'];
  const scaleText = max === 0 ? 'all 0' : `scaled from 0 (bottom) to its own highest value, ${max} (top)`;
  const summary = `${label}: ${values.join(', ')} (oldest to newest); ${scaleText}`;
  return html`<svg class="spark spark-${tone}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${summary}"><title>${summary}</title><line class="scale" x1="${left}" x2="${width - 2}" y1="${n(y(0))}" y2="${n(y(0))}"/><line class="scale" x1="${left}" x2="${width - 2}" y1="${n(y(scale))}" y2="${n(y(scale))}"/><text class="scale" x="${left - 4}" y="${n(y(scale) + 4)}" text-anchor="end">${scale}</text><text class="scale" x="${left - 4}" y="${n(y(0) + 4)}" text-anchor="end">0</text><polyline fill="none" stroke-width="2" points="${points.join(' ')}"/><circle r="2.5" cx="${last[0] ?? '0'}" cy="${last[1] ?? '0'}"/></svg>`;
}

/** Small bars of values (oldest first), e.g. uploads per day, scaled like sparkline (its highest value written). */
export function miniBars(values: readonly number[], labels: readonly string[], label: string): Html {
  const width = 132;
  const height = 32;
  const left = 20;
  const max = Math.max(0, ...values);
  const scale = Math.max(1, max);
  const slot = (width - left) / Math.max(1, values.length);
  const bars = values.map((v, i) => {
    const h = v === 0 ? 0 : Math.max(1.5, (v / scale) * (height - 6));
    return html`<rect x="${n(left + i * slot + 1)}" y="${n(height - 2 - h)}" width="${n(Math.max(1, slot - 2))}" height="${n(h)}"><title>${labels[i] ?? ''}: ${v}</title></rect>`;
  });
  const scaleText = max === 0 ? 'all 0' : `scaled to the highest, ${max}`;
  const summary = `${label}: ${values.join(', ')} (oldest to newest); ${scaleText}`;
  return html`<svg class="bars" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${summary}"><line class="scale" x1="${left}" x2="${width}" y1="${height - 2}" y2="${height - 2}"/><line class="scale" x1="${left}" x2="${width}" y1="4" y2="4"/><text class="scale" x="${left - 4}" y="8" text-anchor="end">${scale}</text><text class="scale" x="${left - 4}" y="${height - 1}" text-anchor="end">0</text>${bars}</svg>`;
}

export interface DayOutcomes {
  readonly label: string;
  readonly passed: number;
  readonly failed: number;
  readonly quarantined: number;
}

const SERIES = [
  { key: 'passed', label: 'Passed', cls: 'passed' },
  { key: 'failed', label: 'Failed', cls: 'failed' },
  { key: 'quarantined', label: 'Failed while quarantined', cls: 'quarantined' },
] as const;

/** Stacked daily bars of passed / failed / quarantined-failure attempts, with an axis and a legend. */
export function dailyOutcomeChart(days: readonly DayOutcomes[], id: string): Html {
  const width = 720;
  const height = 200;
  const left = 36;
  const bottom = 22;
  const top = 8;
  const plotH = height - bottom - top;
  const max = Math.max(1, ...days.map((d) => d.passed + d.failed + d.quarantined));
  const ticks = niceTicks(max);
  const scaleMax = ticks.at(-1) ?? max;
  const slot = (width - left - 4) / Math.max(1, days.length);
  const y = (v: number) => top + plotH - (v / scaleMax) * plotH;
  const grid = ticks.map(
    (t) =>
      html`<line class="grid" x1="${left}" x2="${width - 2}" y1="${n(y(t))}" y2="${n(y(t))}"/><text class="axis" x="${left - 6}" y="${n(y(t) + 4)}" text-anchor="end">${t}</text>`,
  );
  const bars = days.map((d, i) => {
    let base = 0;
    const x = left + i * slot + 1;
    const w = Math.max(1, slot - 2);
    const parts = SERIES.map((s) => {
      const v = d[s.key];
      if (v === 0) return html``;
      const rect = html`<rect class="${s.cls}" x="${n(x)}" y="${n(y(base + v))}" width="${n(w)}" height="${n(y(base) - y(base + v))}"/>`;
      base += v;
      return rect;
    });
    const tip = `${d.label}: ${d.passed} passed, ${d.failed} failed, ${d.quarantined} failed while quarantined`;
    const label =
      i % 5 === 0 || i === days.length - 1
        ? html`<text class="axis" x="${n(x + w / 2)}" y="${height - 6}" text-anchor="middle">${d.label}</text>`
        : html``;
    return html`<g><title>${tip}</title>${parts}<rect class="hit" x="${n(x)}" y="${top}" width="${n(w)}" height="${plotH}"/></g>${label}`;
  });
  const totals = SERIES.map((s) => `${days.reduce((a, d) => a + d[s.key], 0)} ${s.label.toLowerCase()}`);
  const summary = `Attempts per day over the last ${days.length} days: ${totals.join(', ')}. The table below lists each day.`;
  const legend = SERIES.map(
    (s) => html`<li><span class="key key-${s.cls}" aria-hidden="true"></span>${s.label}</li>`,
  );
  return html`<figure class="chart">
<svg id="${id}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${summary}" preserveAspectRatio="xMidYMid meet">${grid}${bars}<line class="axis-line" x1="${left}" x2="${width - 2}" y1="${n(y(0))}" y2="${n(y(0))}"/></svg>
<figcaption><ul class="legend">${legend}</ul></figcaption>
</figure>`;
}

/** 0 and up to four round steps covering max. */
function niceTicks(max: number): number[] {
  const rough = max / 4;
  const mag = 10 ** Math.floor(Math.log10(Math.max(1, rough)));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= rough) ?? rough;
  const out: number[] = [];
  for (let t = 0; t < max + step; t += step) out.push(Math.round(t));
  return out.length < 2 ? [0, 1] : out;
}

export interface ChartSeries<V> {
  readonly label: string;
  /** CSS class of its marks and legend key. */
  readonly cls: string;
  /** One value a slot, oldest first. */
  readonly values: readonly V[];
}

interface Frame {
  readonly width: number;
  readonly height: number;
  readonly left: number;
  readonly top: number;
  readonly plotH: number;
  readonly slot: number;
  readonly y: (v: number) => number;
}

/** The plot area, gridlines with their labels, and the slots' labels (every `every`-th and the last). */
function frame(
  slots: readonly string[],
  max: number,
  tickLabel: (t: number) => string,
  every: number,
): { f: Frame; grid: Html; xLabels: Html[] } {
  const width = 720;
  const height = 180;
  const left = 48;
  const top = 8;
  const plotH = height - 22 - top;
  const ticks = niceTicks(max);
  const scaleMax = ticks.at(-1) ?? max;
  const slot = (width - left - 4) / Math.max(1, slots.length);
  const y = (v: number) => top + plotH - (v / scaleMax) * plotH;
  const grid = html`${ticks.map(
    (t) =>
      html`<line class="grid" x1="${left}" x2="${width - 2}" y1="${n(y(t))}" y2="${n(y(t))}"/><text class="axis" x="${left - 6}" y="${n(y(t) + 4)}" text-anchor="end">${tickLabel(t)}</text>`,
  )}`;
  const xLabels = slots.map((label, i) =>
    i % every === 0 || i === slots.length - 1
      ? html`<text class="axis" x="${n(left + i * slot + slot / 2)}" y="${height - 6}" text-anchor="middle">${label}</text>`
      : html``,
  );
  return { f: { width, height, left, top, plotH, slot, y }, grid, xLabels };
}

function legendOf(series: readonly { label: string; cls: string }[]): Html {
  return html`<ul class="legend">${series.map(
    (s) => html`<li><span class="key key-${s.cls}" aria-hidden="true"></span>${s.label}</li>`,
  )}</ul>`;
}

/** Stacked bars per slot (e.g. per hour), with a y axis, slot labels, a legend and a title per bar. */
export function stackedBarChart(
  id: string,
  slots: readonly string[],
  series: readonly ChartSeries<number>[],
  summary: string,
  every = 3,
): Html {
  const totals = slots.map((_, i) => series.reduce((a, s) => a + (s.values[i] ?? 0), 0));
  const { f, grid, xLabels } = frame(slots, Math.max(1, ...totals), String, every);
  const bars = slots.map((label, i) => {
    let base = 0;
    const x = f.left + i * f.slot + 1;
    const w = Math.max(1, f.slot - 2);
    const parts = series.map((s) => {
      const v = s.values[i] ?? 0;
      if (v === 0) return html``;
      const rect = html`<rect class="${s.cls}" x="${n(x)}" y="${n(f.y(base + v))}" width="${n(w)}" height="${n(f.y(base) - f.y(base + v))}"/>`;
      base += v;
      return rect;
    });
    const tip = `${label}: ${series.map((s) => `${s.values[i] ?? 0} ${s.label.toLowerCase()}`).join(', ')}`;
    return html`<g><title>${tip}</title>${parts}<rect class="hit" x="${n(x)}" y="${f.top}" width="${n(w)}" height="${f.plotH}"/></g>`;
  });
  return html`<figure class="chart">
<svg id="${id}" viewBox="0 0 ${f.width} ${f.height}" role="img" aria-label="${summary}" preserveAspectRatio="xMidYMid meet">${grid}${bars}${xLabels}<line class="axis-line" x1="${f.left}" x2="${f.width - 2}" y1="${n(f.y(0))}" y2="${n(f.y(0))}"/></svg>
<figcaption>${legendOf(series)}</figcaption>
</figure>`;
}

/** The unit durations up to `maxMs` read best in: seconds, minutes or hours. */
function durationUnit(maxMs: number): { ms: number; name: string } {
  if (maxMs < 120_000) return { ms: 1000, name: 's' };
  if (maxMs < 7_200_000) return { ms: 60_000, name: 'min' };
  return { ms: 3_600_000, name: 'h' };
}

/** Lines of durations per slot (gaps where a slot has none), a dot on every value, with a y axis in s, min or h. */
export function durationLineChart(
  id: string,
  slots: readonly string[],
  series: readonly ChartSeries<number | null>[],
  summary: string,
  format: (ms: number) => string,
  every = 3,
): Html {
  const all = series.flatMap((s) => s.values.filter((v): v is number => v !== null));
  const unit = durationUnit(Math.max(0, ...all));
  const { f, grid, xLabels } = frame(
    slots,
    Math.max(1, ...all.map((v) => v / unit.ms)),
    (t) => `${t} ${unit.name}`,
    every,
  );
  const x = (i: number) => f.left + i * f.slot + f.slot / 2;
  const lines = series.map((s) => {
    const runs: string[][] = [[]];
    const dots: Html[] = [];
    s.values.forEach((v, i) => {
      if (v === null) {
        runs.push([]);
        return;
      }
      const point = [n(x(i)), n(f.y(v / unit.ms))] as const;
      runs.at(-1)?.push(point.join(','));
      dots.push(
        html`<circle class="${s.cls}" r="3" cx="${point[0]}" cy="${point[1]}"><title>${slots[i] ?? ''}: ${s.label} ${format(v)}</title></circle>`,
      );
    });
    const polylines = runs
      .filter((r) => r.length > 1)
      .map((r) => html`<polyline class="${s.cls}" fill="none" stroke-width="2" points="${r.join(' ')}"/>`);
    return html`<g>${polylines}${dots}</g>`;
  });
  return html`<figure class="chart">
<svg id="${id}" viewBox="0 0 ${f.width} ${f.height}" role="img" aria-label="${summary}" preserveAspectRatio="xMidYMid meet">${grid}${lines}${xLabels}<line class="axis-line" x1="${f.left}" x2="${f.width - 2}" y1="${n(f.y(0))}" y2="${n(f.y(0))}"/></svg>
<figcaption>${legendOf(series)}</figcaption>
</figure>`;
}
