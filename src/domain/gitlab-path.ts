// GitLab names a project by its full path: the namespace (groups and subgroups) and the project's own path.
/** A project's full path, `group/sub/project`, as owner `group/sub` and name `project` (null: not a project path). */
export function splitProjectPath(path: string): { owner: string; name: string } | null {
  const at = path.lastIndexOf('/');
  if (at <= 0 || at === path.length - 1) return null;
  return { owner: path.slice(0, at), name: path.slice(at + 1) };
}
