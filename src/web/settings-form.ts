import { Type } from 'typebox';
import { Compile } from 'typebox/compile';
import type { SettingsPatch, SettingsRecord } from '../app/health/settings-api.ts';
import { AppError, type ErrorDetail } from '../domain/errors.ts';
import { SettingsPatch as SettingsPatchSchema } from '../http/schemas/flaky-manage.ts';
import { findNul, nulError, type SchemaIssue, toDetails } from '../http/validation.ts';

/**
 * The dashboard's settings form (docs/dashboard.md, "Settings"): its fields are named after the API's
 * JSON paths under `$.settings` (`monitors.failure_count.0.window_hours`), so an error of the API's
 * validation lands next to its field. The form sends the whole settings; it becomes the same
 * `update-repository-settings` body, checked by the same schema, then by the use case.
 */
export type FormValues = Record<string, string>;

const RATE_FIELDS = [
  'activation_threshold',
  'resolution_threshold',
  'window_hours',
  'min_sample_size',
  'stale_timeout_hours',
] as const;
const COUNT_FIELDS = ['failure_count', 'window_hours', 'resolution_timeout_hours'] as const;

const str = (v: number | null) => (v === null ? '' : String(v));
const lines = (branches: readonly string[]) => branches.join('\n');
const on = (b: boolean) => (b ? 'on' : '');

/** The form's values for settings as they are. */
export function formValues(s: SettingsRecord): FormValues {
  const v: FormValues = {
    quarantining_enabled: on(s.quarantining_enabled),
    auto_quarantine_flaky: on(s.auto_quarantine_flaky),
    ticket_url_template: s.ticket_url_template ?? '',
    'monitors.pass_on_retry.enabled': on(s.monitors.pass_on_retry.enabled),
    'monitors.pass_on_retry.recovery_days': String(s.monitors.pass_on_retry.recovery_days),
    'monitors.pass_on_retry.branches': lines(s.monitors.pass_on_retry.branches),
  };
  s.monitors.failure_rate.forEach((m, i) => {
    const p = `monitors.failure_rate.${i}`;
    v[`${p}.id`] = m.id;
    v[`${p}.enabled`] = on(m.enabled);
    for (const f of RATE_FIELDS) v[`${p}.${f}`] = str(m[f]);
    v[`${p}.branches`] = lines(m.branches);
  });
  s.monitors.failure_count.forEach((m, i) => {
    const p = `monitors.failure_count.${i}`;
    v[`${p}.id`] = m.id;
    v[`${p}.enabled`] = on(m.enabled);
    for (const f of COUNT_FIELDS) v[`${p}.${f}`] = str(m[f]);
    v[`${p}.branches`] = lines(m.branches);
  });
  return v;
}

/** A number field: a number when it reads as one, else the text itself (the schema then says what it must be). */
function num(raw: string | undefined): unknown {
  const t = (raw ?? '').trim();
  if (t === '') return t;
  const n = Number(t);
  return Number.isFinite(n) ? n : t;
}

function branchList(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(/\r?\n/)
    .map((b) => b.trim())
    .filter((b) => b !== '');
}

const bodyCheck = Compile(Type.Object({ settings: SettingsPatchSchema }));

/** The API's check of update-repository-settings' `settings` (http/plugins/errors.ts), with its messages. */
function checkPatch(settings: unknown): SettingsPatch {
  const body = { settings };
  const nul = findNul(body);
  if (nul !== undefined) throw nulError(nul);
  if (bodyCheck.Check(body)) return settings as SettingsPatch;
  const details = toDetails([...bodyCheck.Errors(body)] as unknown as SchemaIssue[], 'body');
  const shown = details.slice(0, 3).map((d) => d.message);
  throw new AppError('VALIDATION_FAILED', `Invalid request: ${shown.join('; ')}`, { details });
}

/**
 * The update-repository-settings patch a posted form asks for, checked by the API's schema (400
 * VALIDATION_FAILED with the API's details). The monitors' ids, names and detection types are the
 * current ones; a monitor whose "remove" box is ticked is left out of the list (removed), and new
 * ones are added by their own form (addMonitorPatch). A form built for another list of monitors
 * (changed meanwhile) is refused (409).
 */
export function patchFromForm(
  current: SettingsRecord,
  form: Record<string, string | undefined>,
): SettingsPatch {
  const f = (k: string) => form[k];
  const checked = (k: string) => f(k) === 'on';
  const sameIds = (kind: 'failure_rate' | 'failure_count', ids: string[]) =>
    ids.every((id, i) => f(`monitors.${kind}.${i}.id`) === id) &&
    f(`monitors.${kind}.${ids.length}.id`) === undefined;
  if (
    !sameIds(
      'failure_rate',
      current.monitors.failure_rate.map((m) => m.id),
    ) ||
    !sameIds(
      'failure_count',
      current.monitors.failure_count.map((m) => m.id),
    )
  ) {
    throw new AppError(
      'CONFLICT',
      'The monitors changed since this form was shown; reload the page and make the change again.',
    );
  }
  const template = (f('ticket_url_template') ?? '').trim();
  const patch = {
    quarantining_enabled: checked('quarantining_enabled'),
    auto_quarantine_flaky: checked('auto_quarantine_flaky'),
    ticket_url_template: template === '' ? null : template,
    monitors: {
      pass_on_retry: {
        enabled: checked('monitors.pass_on_retry.enabled'),
        recovery_days: num(f('monitors.pass_on_retry.recovery_days')),
        branches: branchList(f('monitors.pass_on_retry.branches')),
      },
      failure_rate: current.monitors.failure_rate.flatMap((m, i) => {
        const p = `monitors.failure_rate.${i}`;
        if (checked(`${p}.remove`)) return [];
        const stale = (f(`${p}.stale_timeout_hours`) ?? '').trim();
        return {
          id: m.id,
          name: m.name,
          detection_type: m.detection_type,
          enabled: checked(`${p}.enabled`),
          activation_threshold: num(f(`${p}.activation_threshold`)),
          resolution_threshold: num(f(`${p}.resolution_threshold`)),
          window_hours: num(f(`${p}.window_hours`)),
          min_sample_size: num(f(`${p}.min_sample_size`)),
          stale_timeout_hours: stale === '' ? null : num(stale),
          branches: branchList(f(`${p}.branches`)),
        };
      }),
      failure_count: current.monitors.failure_count.flatMap((m, i) => {
        const p = `monitors.failure_count.${i}`;
        if (checked(`${p}.remove`)) return [];
        return {
          id: m.id,
          name: m.name,
          detection_type: m.detection_type,
          enabled: checked(`${p}.enabled`),
          failure_count: num(f(`${p}.failure_count`)),
          window_hours: num(f(`${p}.window_hours`)),
          resolution_timeout_hours: num(f(`${p}.resolution_timeout_hours`)),
          branches: branchList(f(`${p}.branches`)),
        };
      }),
    },
  };
  return checkPatch(patch);
}

/** The form field a detail's path names (`$.settings.monitors.failure_count[0].branches[2]` → `monitors.failure_count.0.branches`). */
export function fieldOf(detail: ErrorDetail): string {
  return detail.path
    .replace(/^\$\.settings\.?/, '')
    .replace(/\[(\d+)\]/g, '.$1')
    .replace(/^(monitors\.\w+\.\d+\.branches|monitors\.pass_on_retry\.branches)\.\d+$/, '$1');
}

/** The two kinds of monitor the dashboard can add, by the `_action` of their form. */
export const ADD_ACTIONS = { add_failure_rate: 'failure_rate', add_failure_count: 'failure_count' } as const;
export type MonitorKind = (typeof ADD_ACTIONS)[keyof typeof ADD_ACTIONS];

/** The add form's field prefix for a kind of monitor. */
export const newPrefix = (kind: MonitorKind) => (kind === 'failure_rate' ? 'new_rate' : 'new_count');

/** The add forms' fields, filled with a usable monitor (the API has no defaults for these). */
export function newMonitorValues(): FormValues {
  return {
    'new_rate.id': '',
    'new_rate.name': '',
    'new_rate.detection_type': 'flaky',
    'new_rate.activation_threshold': '0.3',
    'new_rate.resolution_threshold': '0.1',
    'new_rate.window_hours': '168',
    'new_rate.min_sample_size': '10',
    'new_rate.stale_timeout_hours': '',
    'new_rate.branches': 'main',
    'new_count.id': '',
    'new_count.name': '',
    'new_count.detection_type': 'broken',
    'new_count.failure_count': '4',
    'new_count.window_hours': '1',
    'new_count.resolution_timeout_hours': '24',
    'new_count.branches': 'main',
  };
}

/** The current monitors of a kind as update-repository-settings takes them back unchanged. */
function currentMonitors(current: SettingsRecord) {
  return {
    failure_rate: [...current.monitors.failure_rate],
    failure_count: [...current.monitors.failure_count],
  };
}

/**
 * The update-repository-settings patch that adds one monitor (the add form's fields) after the current
 * ones of its kind, checked by the API's schema; the use case then checks the policy (unique ids…).
 */
export function addMonitorPatch(
  current: SettingsRecord,
  kind: MonitorKind,
  form: Record<string, string | undefined>,
): SettingsPatch {
  const p = newPrefix(kind);
  const f = (k: string) => form[`${p}.${k}`];
  const common = {
    id: (f('id') ?? '').trim(),
    name: (f('name') ?? '').trim(),
    detection_type: f('detection_type') ?? '',
    enabled: true,
    branches: branchList(f('branches')),
  };
  const stale = (f('stale_timeout_hours') ?? '').trim();
  const monitor =
    kind === 'failure_rate'
      ? {
          ...common,
          activation_threshold: num(f('activation_threshold')),
          resolution_threshold: num(f('resolution_threshold')),
          window_hours: num(f('window_hours')),
          min_sample_size: num(f('min_sample_size')),
          stale_timeout_hours: stale === '' ? null : num(stale),
        }
      : {
          ...common,
          failure_count: num(f('failure_count')),
          window_hours: num(f('window_hours')),
          resolution_timeout_hours: num(f('resolution_timeout_hours')),
        };
  const monitors = currentMonitors(current);
  return checkPatch({ monitors: { ...monitors, [kind]: [...monitors[kind], monitor] } });
}

/**
 * The add form's field a detail names: the new monitor is the last of its kind
 * (`$.settings.monitors.failure_count[2].window_hours` → `new_count.window_hours`); '' for the others.
 */
export function addFieldOf(detail: ErrorDetail, kind: MonitorKind, index: number): string {
  const m = fieldOf(detail).match(/^monitors\.(\w+)\.(\d+)\.(\w+)$/);
  if (m === null || m[1] !== kind || Number(m[2]) !== index) return '';
  return `${newPrefix(kind)}.${m[3]}`;
}
