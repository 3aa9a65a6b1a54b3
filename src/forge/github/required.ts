import type { FlakeProtection } from '../../domain/flake-protection.ts';
import { CONFIG_FILE, parseMainlineConfig } from '../git/index.ts';
import { type GhRule, messageOf, pathOf, statusOf, unless } from './api.ts';
import type { GitHubApi, GitHubLog } from './client.ts';

type Params = { owner: string; repo: string };

export interface RequiredStatuses {
  serviceConfig: string[] | null;
  branchProtection: string[] | null;
  flakeProtection: FlakeProtection | null;
}

/**
 * `.mainline.yaml` on the branch (contents API, parsed by the git forge's parser) and the union of the
 * contexts required by classic branch protection and by rulesets (null when neither requires any).
 */
export async function readRequiredStatuses(
  api: GitHubApi,
  log: GitHubLog,
  p: Params,
  branch: string,
): Promise<RequiredStatuses> {
  const [file, protection, rules] = await Promise.all([
    configFile(api, log, p, branch),
    protectionContexts(api, p, branch).catch((err: unknown) => {
      // An App without "Administration: read" cannot see branch protection; rulesets still count.
      if (statusOf(err) !== 403 || /rate limit/i.test(messageOf(err))) throw err;
      log.warn({ repo: `${p.owner}/${p.repo}`, branch }, `branch protection unreadable: ${messageOf(err)}`);
      return null;
    }),
    rulesetContexts(api, p, branch),
  ]);
  const branchProtection =
    protection === null && rules === null ? null : [...new Set([...(protection ?? []), ...(rules ?? [])])];
  return { serviceConfig: file.serviceConfig, branchProtection, flakeProtection: file.flakeProtection };
}

/** The file's settings; a missing file sets nothing, an unreadable one is logged and sets nothing (as in the git forge). */
async function configFile(
  api: GitHubApi,
  log: GitHubLog,
  p: Params,
  branch: string,
): Promise<Omit<RequiredStatuses, 'branchProtection'>> {
  const none = { serviceConfig: null, flakeProtection: null };
  const res = await unless([404], null, () =>
    api.request('GET /repos/{owner}/{repo}/contents/{path}', { ...p, path: CONFIG_FILE, ref: branch }),
  );
  if (res === null) return none;
  const file = res.data as { type?: string; encoding?: string; content?: string };
  const parsed =
    file.type === 'file' && typeof file.content === 'string'
      ? parseMainlineConfig(
          file.encoding === 'base64' ? Buffer.from(file.content, 'base64').toString('utf8') : file.content,
        )
      : { ok: false as const, reason: `${CONFIG_FILE} is not a file` };
  if (parsed.ok) return { serviceConfig: parsed.serviceConfig, flakeProtection: parsed.flakeProtection };
  log.warn({ repo: `${p.owner}/${p.repo}`, branch }, `ignoring ${parsed.reason}`);
  return none;
}

/** Contexts required by classic branch protection, or null when the branch is not protected. */
async function protectionContexts(api: GitHubApi, p: Params, branch: string): Promise<string[] | null> {
  const route = `GET /repos/{owner}/{repo}/branches/${pathOf(branch)}/protection/required_status_checks`;
  const res = await unless([404], null, () => api.request(route, p));
  if (res === null) return null;
  const data = res.data as { contexts?: string[]; checks?: { context: string }[] };
  return [...(data.contexts ?? []), ...(data.checks ?? []).map((c) => c.context)];
}

/** Contexts required by rulesets on the branch, or null when no ruleset requires status checks. */
async function rulesetContexts(api: GitHubApi, p: Params, branch: string): Promise<string[] | null> {
  const route = `GET /repos/{owner}/{repo}/rules/branches/${pathOf(branch)}`;
  const res = await unless([404], null, () => api.request(route, p));
  const rules = ((res?.data ?? []) as GhRule[]).filter((r) => r.type === 'required_status_checks');
  if (rules.length === 0) return null;
  return rules.flatMap((r) => (r.parameters?.required_status_checks ?? []).map((c) => c.context));
}
