/** The links this server puts in responses. One place, so the dashboard routes can match them. */
export interface RepoPath {
  readonly host: string;
  readonly owner: string;
  readonly name: string;
}

function repoSegment(repo: RepoPath): string {
  return [repo.host, ...repo.owner.split('/'), repo.name].map(encodeURIComponent).join('/');
}

export function repositoryHtmlUrl(publicUrl: string, orgSlug: string, repo: RepoPath): string {
  return `${publicUrl}/${encodeURIComponent(orgSlug)}/repos/${repoSegment(repo)}`;
}

export function testHtmlUrl(publicUrl: string, orgSlug: string, repo: RepoPath, testId: string): string {
  return `${repositoryHtmlUrl(publicUrl, orgSlug, repo)}/tests/${testId}`;
}
