import { type Html, html } from './html.ts';

/**
 * Inline SVG charts, drawn here (no charting library). Each is an `img` with an accessible name
 * that states the figures; bars also carry a <title> per bar for pointer users.
 */

const n = (v: number) => (Math.round(v * 10) / 10).toString();

/** A small line of values (oldest first), e.g. flaky tests per day. */
export function sparkline(
  values: readonly number[],
  label: string,
  tone: 'flaky' | 'broken' | 'quarantined',
): Html {
  const width = 112;
  const height = 28;
  const max = Math.max(1, ...values);
  const step = values.length > 1 ? (width - 4) / (values.length - 1) : 0;
  const points = values.map((v, i) => `${n(2 + i * step)},${n(height - 3 - (v / max) * (height - 6))}`);
  const last = points.at(-1)?.split(',') ?? ['0', '0'];
  const summary = `${label}: ${values.join(', ')} (oldest to newest)`;
  return html`<svg class="spark spark-${tone}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${summary}"><title>${summary}</title><polyline fill="none" stroke-width="2" points="${points.join(' ')}"/><circle r="2.5" cx="${last[0] ?? '0'}" cy="${last[1] ?? '0'}"/></svg>`;
}

/** Small bars of values (oldest first), e.g. uploads per day. */
export function miniBars(values: readonly number[], labels: readonly string[], label: string): Html {
  const width = 112;
  const height = 28;
  const max = Math.max(1, ...values);
  const slot = width / Math.max(1, values.length);
  const bars = values.map((v, i) => {
    const h = v === 0 ? 0 : Math.max(1.5, (v / max) * (height - 2));
    return html`<rect x="${n(i * slot + 1)}" y="${n(height - h)}" width="${n(Math.max(1, slot - 2))}" height="${n(h)}"><title>${labels[i] ?? ''}: ${v}</title></rect>`;
  });
  const summary = `${label}: ${values.join(', ')} (oldest to newest)`;
  return html`<svg class="bars" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${summary}">${bars}</svg>`;
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
