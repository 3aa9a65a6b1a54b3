/**
 * Reading the bundle trunk-analytics-cli PUTs to the `url` createBundleUpload returns.
 *
 * What the bundle is (trunk-io/analytics-cli, read at the commits the code index holds):
 * - `bundle/src/bundler.rs` (BundlerUtil::make_tarball): `bundle.tar.zstd` is a tar (Rust `tar`
 *   crate, GNU headers) inside a zstd stream (level 15, i.e. a 4 MiB window). Entries, in order:
 *   `meta.json` FIRST (the server side's parse_meta_from_tarball relies on it), then (at commit
 *   fcbc1bd; earlier CLIs put it after the file sets) meta's `internal_bundled_file` under its `path`
 *   (`internal.bin`, a protobuf TestReport: collect.ts, domain/internal-bin; the rspec plugin's own
 *   .bin is `internal/0`), then every file of every file set except `Internal` ones under its `path`
 *   (`junit/<n>` for .xml reports, `internal/<n>` for .bin), then `CODEOWNERS` (the file's content)
 *   when meta has `codeowners`, then `bazel_bep.json` (JSON lines) when a Bazel BEP file was given.
 *   Entry names carry no extension: `junit/0`, not `junit/0.xml`.
 * - `bundle/src/bundle_meta.rs`: meta.json is `BundleMeta` (latest `BundleMetaV0_7_8`) serialised
 *   flat (serde `flatten`, no version tag; readers try V0_7_8 → … → V0_5_29). Base props:
 *   `version` ("1"), `cli_version`, `org` (org URL slug), `repo` (BundleRepo), `bundle_upload_id`,
 *   `tags` [{key, value}], `file_sets`, `envs` {string: string}, `upload_time_epoch` (seconds),
 *   `test_command`?, `os_info`?, `quarantined_tests` [Test], `codeowners`? {path}, and
 *   `use_uncloned_repo`?. Later versions add `num_files`, `num_tests` (0.5.34), `command_line`
 *   (0.6.2), `bundle_upload_id_v2` (0.6.3), `variant`? (0.7.6), `internal_bundled_file`? (0.7.7),
 *   `failed_tests` [Test] (0.7.8). Test = {name, parentName, className?, file?, id, …}.
 * - `context/src/repo/mod.rs`: BundleRepo = {repo: {host, owner, name}, repo_root, repo_url,
 *   repo_head_sha, repo_head_branch (from git: often `refs/heads/x` or `refs/remotes/origin/x`, ""
 *   when detached), repo_head_commit_epoch, repo_head_commit_message, repo_head_author_name,
 *   repo_head_author_email}.
 * - `bundle/src/files.rs`: FileSet = {file_set_type: "Junit" | "Internal", files: [BundledFile],
 *   glob, resolved_status?, resolved_*_time_epoch_ms? (Bazel only)}; BundledFile = {original_path
 *   (absolute), original_path_rel?, path (inside the tar), owners [], team?}.
 * - `constants/src/lib.rs` ENVS_TO_GET: `envs` holds only listed CI variables (GITHUB_*, CI_* for
 *   GitLab, BUILDKITE_*, CIRCLE_*, Jenkins CHANGE_ID/JOB_NAME/BUILD_URL, …). Meta has no PR or job
 *   fields: they are derived here from `envs` with src/cli/ci-env.ts (GitHub PR number from
 *   GITHUB_REF `refs/pull/<n>/merge`; GitHub has no PR title in the env).
 */
export { extractBundle } from './extract.ts';
export { normaliseBranch } from './meta.ts';
export type { BundleSource } from './source.ts';
export type {
  BundleErrorCode,
  BundleFile,
  BundleFormat,
  BundleJunitFileRef,
  BundleLimits,
  BundleResult,
  BundleUploadMeta,
  RepoRef,
} from './types.ts';
export { DEFAULT_BUNDLE_LIMITS } from './types.ts';
export { type BundleAsUploadMeta, toUploadMeta, type UploadMetaOutcome } from './upload-meta.ts';
