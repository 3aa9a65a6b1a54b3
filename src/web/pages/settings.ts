import { getSettings, updateSettings } from '../../app/health/manage.ts';
import { findRepository } from '../../app/repositories.ts';
import { AppError } from '../../domain/errors.ts';
import { CSS_HREF, type Form, sendPage, text } from '../respond.ts';
import type { Web } from '../session-plugin.ts';
import {
  ADD_ACTIONS,
  addFieldOf,
  addMonitorPatch,
  fieldOf,
  formValues,
  type MonitorKind,
  newMonitorValues,
  newPrefix as newPrefixOf,
  patchFromForm,
} from '../settings-form.ts';
import { settingsView } from '../views/settings.ts';
import type { RepoRequest } from './repos.ts';

/** `…/settings`: the repository's settings and monitors as a form. */
export async function showSettings(w: Web, r: RepoRequest<{ page: 'settings' }>) {
  const scope = { repo: r.repo, org_url_slug: r.s.caller.orgSlug };
  const { settings } = await getSettings(w.ctx, r.s.caller, scope);
  const repository = await findRepository(w.ctx.db, r.s.caller, r.repo);
  const updated = text(r.query['updated'], 20);
  const saved = updated === 'settings' || updated === 'monitor-added' ? updated : false;
  return sendPage(
    r.reply,
    200,
    settingsView(CSS_HREF, r.s.viewer, {
      repository,
      settings,
      values: { ...formValues(settings), ...newMonitorValues() },
      errors: new Map(),
      saved,
    }),
  );
}

/**
 * The settings form posted: the API's schema, then the API's use case (updateSettings: the same
 * policy checks, re-evaluation and history). Refused values come back beside their fields, 400.
 */
export async function saveSettingsForm(w: Web, r: RepoRequest<{ page: 'settings' }>, form: Form) {
  const { s, repo } = r;
  const scope = { repo, org_url_slug: s.caller.orgSlug };
  const { settings } = await getSettings(w.ctx, s.caller, scope);
  const action = form['_action'] ?? 'save';
  const adding: MonitorKind | undefined = ADD_ACTIONS[action as keyof typeof ADD_ACTIONS];
  try {
    const patch =
      adding === undefined ? patchFromForm(settings, form) : addMonitorPatch(settings, adding, form);
    await updateSettings(w.ctx, s.caller, { ...scope, settings: patch });
  } catch (error) {
    if (!(error instanceof AppError && error.code === 'VALIDATION_FAILED')) throw error;
    const values = { ...formValues(settings), ...newMonitorValues() };
    // Only the form that was posted comes back as typed; the other keeps its values.
    for (const key of Object.keys(values)) {
      const posted =
        adding === undefined ? !key.startsWith('new_') : key.startsWith(`${newPrefixOf(adding)}.`);
      if (posted) values[key] = form[key] ?? '';
    }
    const errors = new Map<string, string[]>();
    const details = error.details ?? [{ path: '', expected: '', message: error.message }];
    for (const d of details) {
      const field =
        adding === undefined ? fieldOf(d) : addFieldOf(d, adding, settings.monitors[adding].length);
      const key = field in values ? field : adding === undefined ? '' : `${newPrefixOf(adding)}.`;
      errors.set(key, [...(errors.get(key) ?? []), d.message]);
    }
    const repository = await findRepository(w.ctx.db, s.caller, repo);
    return sendPage(
      r.reply,
      400,
      settingsView(CSS_HREF, s.viewer, { repository, settings, values, errors, saved: false }),
    );
  }
  const updated = adding === undefined ? 'settings' : 'monitor-added';
  return r.reply.redirect(`${r.request.url.split('?')[0] ?? ''}?updated=${updated}`, 303);
}
