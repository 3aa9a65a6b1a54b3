import { queueForgeOf } from '../../app/dashboard/queues.ts';
import { updateQueue } from '../../app/queue/queues.ts';
import { getQueue } from '../../app/queue/reads.ts';
import { findRepository } from '../../app/repositories.ts';
import { AppError } from '../../domain/errors.ts';
import { paths } from '../paths.ts';
import { QUEUE_CHOICES, queueFieldOf, queueFormValues, queuePatchFromForm } from '../queue-settings-form.ts';
import { CSS_HREF, type Form, sendPage, text } from '../respond.ts';
import type { Web } from '../session-plugin.ts';
import { queueSettingsView } from '../views/queue-settings.ts';
import type { RepoRequest } from './repos.ts';

/**
 * `…/queues/{branch}/settings`: a queue's settings form, as saved, or as posted (`form`) with the
 * API's messages beside their fields.
 */
export async function queueSettingsPage(
  w: Web,
  r: RepoRequest<{ page: 'queue-settings'; branch: string }>,
  form: Form | undefined,
) {
  const { ctx, forge } = w;
  const { s, repo, reply } = r;
  const branch = r.route.branch;
  const saved = form === undefined && text(r.query['updated'], 20) === 'queue';
  const current = await getQueue(ctx, s.caller, forge, { repo, targetBranch: branch });
  const repository = await findRepository(ctx.db, s.caller, repo);
  const values = queueFormValues(current);
  const errors = new Map<string, string[]>();
  if (form !== undefined) {
    try {
      await updateQueue(
        ctx,
        s.caller,
        forge,
        queuePatchFromForm(current, { repo, targetBranch: branch }, form),
      );
      return reply.redirect(`${paths.queueSettings(s.caller.orgSlug, repo, branch)}?updated=queue`, 303);
    } catch (error) {
      if (
        !(error instanceof AppError && (error.status === 400 || error.status === 409 || error.status === 422))
      )
        throw error;
      for (const key of Object.keys(values))
        values[key] = form[key] ?? (key in QUEUE_CHOICES ? (values[key] ?? '') : '');
      const details = error.details ?? [{ path: '', expected: '', message: error.message }];
      for (const d of details) {
        const field = queueFieldOf(d);
        const key = field in values ? field : '';
        errors.set(key, [...(errors.get(key) ?? []), d.message]);
      }
    }
  }
  return sendPage(
    reply,
    errors.size > 0 ? 400 : 200,
    queueSettingsView(CSS_HREF, s.viewer, {
      repository,
      branch,
      forge: queueForgeOf(ctx.config, repo),
      values,
      errors,
      saved,
    }),
  );
}
