#!/usr/bin/env node
// mainline-upload 0.1.0: the client commands of Mainline (upload, test) in one file, made by
// scripts/build.mjs (npm run build) from src/cli/uploader.ts. Do not edit: edit src/cli and rebuild.

// src/cli/client.ts
import { createHash } from "node:crypto";
var CliError = class extends Error {
  constructor(message, exitCode = 1, showUsage = false) {
    super(message);
    this.exitCode = exitCode;
    this.showUsage = showUsage;
  }
  exitCode;
  showUsage;
  name = "CliError";
};
var TIMEOUT_MS = 5 * 6e4;
var HINTS = {
  401: "check --token or MAINLINE_TOKEN",
  404: "check --org (or MAINLINE_ORG) and --url",
  413: "the server refused the upload as too large (its MAINLINE_BODY_LIMIT); upload fewer files at a time"
};
function describeErrorResponse(status, text, url) {
  let error;
  try {
    const parsed = JSON.parse(text);
    error = typeof parsed.error === "object" ? parsed.error : parsed;
    if (typeof error.message !== "string") error = void 0;
  } catch {
    error = void 0;
  }
  if (error?.code === "ROUTE_NOT_FOUND") {
    return `${url} does not accept test-results uploads (404 ROUTE_NOT_FOUND); is it a Mainline server, and recent enough?`;
  }
  const head = `the server answered ${status}${error?.code ? ` ${error.code}` : ""}: ${error?.message ?? (text.trim().slice(0, 300) || "no message")}`;
  const details = (error?.details ?? []).map((d) => `
  ${d.path ?? "$"}: ${d.message ?? ""}`).join("");
  const hint = HINTS[status] === void 0 ? "" : `
(${HINTS[status]})`;
  return head + details + hint;
}
function describeNetworkError(error, url) {
  const e = error;
  if (e.name === "TimeoutError") return `no answer from ${url} within ${TIMEOUT_MS / 1e3} seconds`;
  const reason = e.cause?.code ?? e.cause?.message ?? e.message ?? String(error);
  return `cannot reach the server at ${url} (${reason}); check --url or MAINLINE_URL`;
}
function buildForm(meta, files) {
  const form = new FormData();
  form.append("meta", JSON.stringify(meta));
  for (const file of files) {
    form.append("junit", new Blob([file.body], { type: "application/octet-stream" }), file.name);
  }
  return form;
}
function contentUploadKey(meta, files) {
  const hash = createHash("sha256");
  const { upload_key: _ignored, ...rest } = meta;
  hash.update(JSON.stringify(rest));
  for (const f of files) {
    hash.update("\0");
    hash.update(f.name);
    hash.update("\0");
    hash.update(f.body);
  }
  return `auto-${hash.digest("hex").slice(0, 40)}`;
}
var TransientUploadError = class extends CliError {
  constructor(message, retryAfterMs) {
    super(message);
    this.retryAfterMs = retryAfterMs;
  }
  retryAfterMs;
};
async function postOnce(baseUrl, token, meta, files) {
  const url = `${baseUrl.replace(/\/+$/, "")}/v1/test-results/upload`;
  let response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { "x-api-token": token, accept: "application/json" },
      body: buildForm(meta, files),
      signal: AbortSignal.timeout(TIMEOUT_MS)
    });
  } catch (error) {
    throw new TransientUploadError(describeNetworkError(error, baseUrl), void 0);
  }
  const text = await response.text();
  if (response.status === 429 || response.status >= 500) {
    const seconds = Number(response.headers.get("retry-after"));
    const wait = Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 30) * 1e3 : void 0;
    throw new TransientUploadError(describeErrorResponse(response.status, text, baseUrl), wait);
  }
  if (!response.ok) throw new CliError(describeErrorResponse(response.status, text, baseUrl));
  try {
    return JSON.parse(text);
  } catch {
    throw new CliError(`the server at ${baseUrl} answered ${response.status} with a body that is not JSON`);
  }
}
async function postUpload(baseUrl, token, meta, files, options = {}) {
  const keyed = meta.upload_key === void 0 ? { ...meta, upload_key: contentUploadKey(meta, files) } : meta;
  const retries = options.retries ?? 2;
  for (let attempt = 0; ; attempt++) {
    try {
      return await postOnce(baseUrl, token, keyed, files);
    } catch (error) {
      if (!(error instanceof TransientUploadError) || attempt >= retries) throw error;
      const wait = error.retryAfterMs ?? (options.retryDelayMs ?? 1e3) * 2 ** attempt;
      options.onRetry?.(`${error.message}; retrying in ${Math.round(wait / 100) / 10} s`);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

// src/cli/test-command.ts
import { spawn } from "node:child_process";
import os from "node:os";

// src/cli/upload.ts
import { execFileSync } from "node:child_process";
import fs2 from "node:fs";
import path2 from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";

// src/domain/ci-env.ts
function read(env, name) {
  const value = env[name]?.trim();
  return value === void 0 || value === "" ? void 0 : value;
}
function positiveInt(raw) {
  if (raw === void 0 || !/^\d+$/.test(raw)) return void 0;
  const n = Number(raw);
  return n >= 1 && Number.isSafeInteger(n) ? n : void 0;
}
function wholeNumber(raw) {
  return raw === "0" ? 0 : positiveInt(raw);
}
function repoFromPath(host, repoPath) {
  const parts = repoPath.replace(/\.git\/?$/, "").split("/").filter((p) => p !== "");
  const name = parts.pop();
  if (name === void 0 || parts.length === 0 || host === "") return void 0;
  return { host: host.toLowerCase(), owner: parts.join("/"), name };
}
function parseGitRemote(url) {
  const trimmed = url.trim();
  const withScheme = trimmed.match(/^[a-z][a-z0-9+.-]*:\/\/(?:[^@/]*@)?([^/:]+)(?::\d*)?\/(.+)$/i);
  if (withScheme?.[1] !== void 0 && withScheme[2] !== void 0) {
    return repoFromPath(withScheme[1], withScheme[2]);
  }
  const scpLike = trimmed.match(/^(?:[^@/]+@)?([^/:]+):(?!\/)(.+)$/);
  if (scpLike?.[1] !== void 0 && scpLike[2] !== void 0) return repoFromPath(scpLike[1], scpLike[2]);
  return void 0;
}
var MERGE_REF = /^(?:refs\/)?(?:remotes\/)?(?:(?:pull|merge-requests)\/)?(\d+)\/(?:merge|head)$|^(?:refs\/)?(?:remotes\/)?pull\/(\d+)$/;
function pullRequestOfRef(ref) {
  const m = ref?.trim().match(MERGE_REF);
  return positiveInt(m?.[1] ?? m?.[2]);
}
function branchName(raw) {
  const value = raw?.trim();
  if (value === void 0 || value === "" || MERGE_REF.test(value)) return void 0;
  const name = value.replace(/^refs\/heads\//, "").replace(/^refs\/remotes\/[^/]+\//, "");
  return name === "" || MERGE_REF.test(name) ? void 0 : name;
}
function firstBranch(...candidates) {
  for (const candidate of candidates) {
    const name = branchName(candidate);
    if (name !== void 0) return name;
  }
  return void 0;
}
function prNumberFromUrl(url) {
  return positiveInt(url?.match(/\/(\d+)\/?$/)?.[1]);
}
function githubEvent(env, options) {
  const eventPath = read(env, "GITHUB_EVENT_PATH");
  if (eventPath === void 0 || options.readFile === void 0) return void 0;
  try {
    const text = options.readFile(eventPath);
    const event = text === void 0 ? void 0 : JSON.parse(text);
    return event?.pull_request ?? void 0;
  } catch {
    return void 0;
  }
}
function github(env, options) {
  const pr = githubEvent(env, options);
  const host = read(env, "GITHUB_SERVER_URL")?.match(/^https?:\/\/([^/:]+)/)?.[1] ?? "github.com";
  const repository = read(env, "GITHUB_REPOSITORY");
  const server = read(env, "GITHUB_SERVER_URL") ?? "https://github.com";
  const runId = read(env, "GITHUB_RUN_ID");
  const ref = read(env, "GITHUB_REF");
  return {
    provider: "github",
    repo: repository === void 0 ? void 0 : repoFromPath(host, repository),
    // On pull_request events GITHUB_SHA is a temporary merge commit; the head commit is the PR's.
    commitSha: typeof pr?.head?.sha === "string" ? pr.head.sha : read(env, "GITHUB_SHA"),
    // On pull_request events GITHUB_REF is the merge ref and GITHUB_HEAD_REF the PR's branch; the
    // analytics CLI sends GITHUB_REF but not GITHUB_REF_NAME, so a push's refs/heads/x counts too.
    branch: firstBranch(
      read(env, "GITHUB_HEAD_REF"),
      read(env, "GITHUB_REF_NAME"),
      ref?.startsWith("refs/heads/") ? ref : void 0
    ),
    prNumber: pullRequestOfRef(ref) ?? (typeof pr?.number === "number" ? pr.number : void 0),
    prTitle: typeof pr?.title === "string" ? pr.title : void 0,
    jobName: read(env, "GITHUB_JOB"),
    jobUrl: repository !== void 0 && runId !== void 0 ? `${server.replace(/\/+$/, "")}/${repository}/actions/runs/${runId}` : void 0,
    runAttempt: wholeNumber(read(env, "GITHUB_RUN_ATTEMPT"))
  };
}
function gitlab(env) {
  const host = read(env, "CI_SERVER_HOST");
  const projectPath = read(env, "CI_PROJECT_PATH");
  return {
    provider: "gitlab",
    repo: host !== void 0 && projectPath !== void 0 ? repoFromPath(host, projectPath) : void 0,
    // Merged-results pipelines build a merge commit; the source branch's head is the MR's commit.
    commitSha: read(env, "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA") ?? read(env, "CI_COMMIT_SHA"),
    branch: firstBranch(
      read(env, "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME"),
      read(env, "CI_EXTERNAL_PULL_REQUEST_SOURCE_BRANCH_NAME"),
      read(env, "CI_COMMIT_BRANCH"),
      read(env, "CI_COMMIT_REF_NAME")
    ),
    prNumber: positiveInt(read(env, "CI_MERGE_REQUEST_IID")) ?? positiveInt(read(env, "CI_EXTERNAL_PULL_REQUEST_IID")) ?? pullRequestOfRef(read(env, "CI_MERGE_REQUEST_REF_PATH")),
    prTitle: read(env, "CI_MERGE_REQUEST_TITLE"),
    jobName: read(env, "CI_JOB_NAME"),
    jobUrl: read(env, "CI_JOB_URL")
  };
}
function buildkite(env) {
  const repoUrl = read(env, "BUILDKITE_REPO");
  const commit = read(env, "BUILDKITE_COMMIT");
  const buildUrl = read(env, "BUILDKITE_BUILD_URL");
  const jobId = read(env, "BUILDKITE_JOB_ID");
  return {
    provider: "buildkite",
    repo: repoUrl === void 0 ? void 0 : parseGitRemote(repoUrl),
    // A build started without a commit says "HEAD"; git knows which commit that is.
    commitSha: commit === "HEAD" ? void 0 : commit,
    branch: firstBranch(read(env, "BUILDKITE_BRANCH")),
    prNumber: positiveInt(read(env, "BUILDKITE_PULL_REQUEST")),
    jobName: read(env, "BUILDKITE_LABEL"),
    jobUrl: buildUrl !== void 0 && jobId !== void 0 ? `${buildUrl}#${jobId}` : buildUrl,
    runAttempt: wholeNumber(read(env, "BUILDKITE_RETRY_COUNT"))
  };
}
function circleci(env) {
  const repoUrl = read(env, "CIRCLE_REPOSITORY_URL");
  const owner = read(env, "CIRCLE_PROJECT_USERNAME");
  const name = read(env, "CIRCLE_PROJECT_REPONAME");
  const fromParts = owner !== void 0 && name !== void 0 ? { host: "github.com", owner, name } : void 0;
  return {
    provider: "circleci",
    repo: (repoUrl === void 0 ? void 0 : parseGitRemote(repoUrl)) ?? fromParts,
    commitSha: read(env, "CIRCLE_SHA1"),
    // A pull request from a fork builds CIRCLE_BRANCH "pull/123": its number, not a branch.
    branch: firstBranch(read(env, "CIRCLE_BRANCH")),
    prNumber: prNumberFromUrl(read(env, "CIRCLE_PULL_REQUEST")) ?? positiveInt(read(env, "CIRCLE_PR_NUMBER")) ?? pullRequestOfRef(read(env, "CIRCLE_BRANCH")),
    jobName: read(env, "CIRCLE_JOB"),
    jobUrl: read(env, "CIRCLE_BUILD_URL")
  };
}
function jenkins(env) {
  const gitUrl = read(env, "GIT_URL");
  const branch = read(env, "CHANGE_BRANCH") ?? read(env, "BRANCH_NAME") ?? read(env, "GIT_BRANCH");
  return {
    provider: "jenkins",
    repo: gitUrl === void 0 ? void 0 : parseGitRemote(gitUrl),
    commitSha: read(env, "GIT_COMMIT"),
    branch: branchName(branch?.replace(/^(?:refs\/remotes\/)?origin\//, "")),
    prNumber: positiveInt(read(env, "CHANGE_ID")),
    prTitle: read(env, "CHANGE_TITLE"),
    jobName: read(env, "JOB_NAME"),
    jobUrl: read(env, "BUILD_URL")
  };
}
function azure(env) {
  const repoUrl = read(env, "BUILD_REPOSITORY_URI");
  const repo = repoUrl === void 0 ? void 0 : parseGitRemote(repoUrl.replace(/\/_git\//, "/"));
  const collection = read(env, "SYSTEM_TEAMFOUNDATIONCOLLECTIONURI");
  const project = read(env, "SYSTEM_TEAMPROJECT");
  const buildId = read(env, "BUILD_BUILDID");
  const sourceBranch = read(env, "BUILD_SOURCEBRANCH");
  return {
    provider: "azure",
    repo,
    commitSha: read(env, "BUILD_SOURCEVERSION"),
    branch: firstBranch(read(env, "SYSTEM_PULLREQUEST_SOURCEBRANCH"), sourceBranch),
    prNumber: positiveInt(read(env, "SYSTEM_PULLREQUEST_PULLREQUESTNUMBER")) ?? positiveInt(read(env, "SYSTEM_PULLREQUEST_PULLREQUESTID")) ?? pullRequestOfRef(sourceBranch),
    jobName: read(env, "SYSTEM_JOBDISPLAYNAME") ?? read(env, "BUILD_DEFINITIONNAME"),
    jobUrl: collection !== void 0 && project !== void 0 && buildId !== void 0 ? `${collection.replace(/\/+$/, "")}/${encodeURIComponent(project)}/_build/results?buildId=${encodeURIComponent(buildId)}` : void 0
  };
}
function bitbucket(env) {
  const origin = read(env, "BITBUCKET_GIT_HTTP_ORIGIN") ?? read(env, "BITBUCKET_GIT_SSH_ORIGIN");
  const fullName = read(env, "BITBUCKET_REPO_FULL_NAME");
  const repo = (origin === void 0 ? void 0 : parseGitRemote(origin)) ?? (fullName === void 0 ? void 0 : repoFromPath("bitbucket.org", fullName));
  const buildNumber = read(env, "BITBUCKET_BUILD_NUMBER");
  return {
    provider: "bitbucket",
    repo,
    commitSha: read(env, "BITBUCKET_COMMIT"),
    branch: firstBranch(read(env, "BITBUCKET_BRANCH")),
    prNumber: positiveInt(read(env, "BITBUCKET_PR_ID")),
    jobUrl: repo !== void 0 && buildNumber !== void 0 ? `https://${repo.host}/${repo.owner}/${repo.name}/pipelines/results/${encodeURIComponent(buildNumber)}` : void 0
  };
}
function fromProvider(env, options) {
  if (read(env, "GITHUB_ACTIONS") === "true") return github(env, options);
  if (read(env, "GITLAB_CI") === "true") return gitlab(env);
  if (read(env, "BUILDKITE") === "true") return buildkite(env);
  if (read(env, "CIRCLECI") === "true") return circleci(env);
  if (read(env, "JENKINS_URL") !== void 0) return jenkins(env);
  if (read(env, "TF_BUILD")?.toLowerCase() === "true") return azure(env);
  if (read(env, "BITBUCKET_BUILD_NUMBER") !== void 0) return bitbucket(env);
  return { provider: "local" };
}
function withPrOverride(context, env) {
  const pr = positiveInt(read(env, "TRUNK_PR_NUMBER"));
  return pr === void 0 ? context : { ...context, prNumber: pr };
}
function withGitFallback(context, git) {
  if (git === void 0) return context;
  const filled = { ...context };
  if (filled.repo === void 0) {
    const remote = git(["remote", "get-url", "origin"]);
    filled.repo = remote === void 0 ? void 0 : parseGitRemote(remote);
  }
  filled.commitSha ??= git(["rev-parse", "HEAD"]);
  if (filled.branch === void 0) {
    const branch = git(["rev-parse", "--abbrev-ref", "HEAD"]);
    filled.branch = branch === "HEAD" ? void 0 : branchName(branch);
  }
  return filled;
}
function withoutUndefined(context) {
  return Object.fromEntries(Object.entries(context).filter(([, v]) => v !== void 0));
}
function detectCi(env, options = {}) {
  return withoutUndefined(withGitFallback(withPrOverride(fromProvider(env, options), env), options.git));
}

// src/cli/globs.ts
import fs from "node:fs";
import path from "node:path";
var SKIPPED_DIRS = /* @__PURE__ */ new Set([".git", "node_modules"]);
function toPosix(p) {
  return p.split(path.sep).join("/");
}
function hasWildcard(segment) {
  return /[*?[]/.test(segment);
}
function escapeRegExp(text) {
  return text.replace(/[.+^${}()|[\]\\*?]/g, "\\$&");
}
function segmentSource(segment) {
  let out2 = "";
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i];
    if (c === "*") out2 += "[^/]*";
    else if (c === "?") out2 += "[^/]";
    else if (c === "[" && segment.indexOf("]", i + 2) !== -1) {
      const end = segment.indexOf("]", i + 2);
      const body = segment.slice(i + 1, end).replace(/^!/, "^").replace(/\\/g, "\\\\");
      out2 += `[${body}]`;
      i = end;
    } else out2 += escapeRegExp(c);
  }
  return out2;
}
function globToRegExp(pattern) {
  const segments = pattern.split("/");
  let source = "";
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    if (segment === "**") source += last ? ".*" : "(?:[^/]+/)*";
    else source += segmentSource(segment) + (last ? "" : "/");
  });
  return new RegExp(`^${source}$`);
}
function walk(dir, depth, w) {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (depth + 1 >= w.maxDepth) continue;
      if (SKIPPED_DIRS.has(entry.name) && !w.literal.includes(`/${entry.name}/`)) continue;
      walk(full, depth + 1, w);
    } else if (entry.isFile() && w.matcher.test(toPosix(full))) {
      w.found.push(full);
    }
  }
}
function expandOne(pattern, cwd) {
  const absolute = toPosix(path.resolve(cwd, pattern));
  const segments = absolute.split("/");
  const firstWild = segments.findIndex(hasWildcard);
  if (firstWild === -1) {
    const stat = fs.statSync(absolute, { throwIfNoEntry: false });
    return stat?.isFile() ? [path.resolve(absolute)] : [];
  }
  const base = segments.slice(0, firstWild).join("/") || "/";
  const rest = segments.slice(firstWild);
  const found = [];
  walk(base, 0, {
    matcher: globToRegExp(absolute),
    maxDepth: rest.includes("**") ? Number.POSITIVE_INFINITY : rest.length,
    literal: `${absolute}/`,
    found
  });
  return found;
}
function expandGlobs(patterns, cwd) {
  const files = /* @__PURE__ */ new Set();
  const unmatched = [];
  for (const pattern of patterns) {
    const found = expandOne(pattern, cwd);
    if (found.length === 0) unmatched.push(pattern);
    for (const file of found) files.add(file);
  }
  return { files: [...files].sort(), unmatched };
}

// src/cli/upload-summary.ts
var MAX_LISTED_TESTS = 50;
function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}
function testLabel(test) {
  const scope = test.classname || test.parent || "";
  const label = scope === "" ? test.name : `${scope}.${test.name}`;
  return test.file ? `${label} (${test.file})` : label;
}
function fileLines(file) {
  const head = file.ok ? `  ${file.name}: ${attemptsLine(file.counts)}` : `  ${file.name}: not ingested`;
  const problems = file.problems.map((p) => {
    const at = p.line === void 0 ? "" : ` at line ${p.line}${p.column === void 0 ? "" : `:${p.column}`}`;
    return `    ${p.severity}${at}: ${p.message}`;
  });
  return [head, ...problems];
}
function attemptsLine(c) {
  const passed = Math.max(0, c.attempts - c.failures - c.skipped);
  const retries = c.retries === 0 ? "" : `; ${plural(c.retries, "retry", "retries")} among them`;
  return `${plural(c.attempts, "test attempt")}: ${passed} passed, ${c.failures} failed, ${c.skipped} skipped${retries}`;
}
function failedLines(response) {
  const failed = response.failed_tests;
  if (failed.length === 0) {
    return response.counts.failures === 0 ? ["no test failed"] : [
      `no test failed: each of the ${plural(response.counts.failures, "failed attempt")} passed on a later attempt`
    ];
  }
  const quarantined = failed.filter((t) => t.quarantined).length;
  const more = response.failed_tests_truncated ? " (more were cut)" : "";
  const lines = [
    `${plural(failed.length, "test", "tests")} failed (each counted once, by its last attempt)${more}, ${quarantined} of them quarantined:`
  ];
  for (const test of failed.slice(0, MAX_LISTED_TESTS)) {
    lines.push(`  ${test.quarantined ? "quarantined " : "FAILED      "} ${testLabel(test)}`);
  }
  if (failed.length > MAX_LISTED_TESTS) lines.push(`  … and ${failed.length - MAX_LISTED_TESTS} more`);
  return lines;
}
function formatSummary(response, url) {
  const { counts, repo } = response;
  const where = `${repo.host}/${repo.owner}/${repo.name}`;
  const first = response.duplicate ? `already uploaded with this upload key; the first upload's result (${response.upload_id}):` : `uploaded ${plural(counts.files, "file")} for ${where} to ${url} (upload ${response.upload_id})`;
  const totals = attemptsLine(counts);
  const files = response.files.filter((f) => !f.ok || f.problems.length > 0).flatMap(fileLines);
  return [first, totals, ...files, ...failedLines(response)].join("\n");
}

// src/cli/upload.ts
function clientContext(out2) {
  const cwd = process.cwd();
  return {
    env: { ...process.env },
    cwd,
    out: out2,
    git: (args) => {
      try {
        const stdout = execFileSync("git", args, {
          cwd,
          encoding: "utf8",
          stdio: ["ignore", "pipe", "ignore"]
        });
        return stdout.trim() || void 0;
      } catch {
        return void 0;
      }
    },
    readFile: (file) => {
      try {
        return fs2.readFileSync(file, "utf8");
      } catch {
        return void 0;
      }
    }
  };
}
var DEFAULT_URL = "http://127.0.0.1:8080";
var GZIP_ABOVE_BYTES = 1024 * 1024;
var CODEOWNERS_PLACES = [".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS", ".gitlab/CODEOWNERS"];
var OPTIONS = {
  junit: { type: "string", multiple: true },
  repo: { type: "string" },
  branch: { type: "string" },
  sha: { type: "string" },
  pr: { type: "string" },
  variant: { type: "string" },
  "job-name": { type: "string" },
  "job-url": { type: "string" },
  org: { type: "string" },
  codeowners: { type: "string" },
  "upload-key": { type: "string" },
  url: { type: "string" },
  token: { type: "string" },
  json: { type: "boolean" }
};
function parseUploadFlags(args, command) {
  let values;
  try {
    values = parseArgs({ args: [...args], options: OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new CliError(`${command}: ${error.message}`, 2, true);
  }
  if (values.junit === void 0 || values.junit.length === 0) {
    throw new CliError(`${command} needs --junit <glob> (for example --junit 'reports/**/*.xml')`, 2, true);
  }
  if (values.pr !== void 0 && !/^[1-9]\d*$/.test(values.pr)) {
    throw new CliError(`--pr must be a pull-request number, got "${values.pr}"`, 2);
  }
  return values;
}
function parseRepoFlag(value) {
  const fromUrl = /[@:]/.test(value) ? parseGitRemote(value) : void 0;
  const parts = value.split("/").filter((p) => p !== "");
  const name = parts.at(-1);
  const repo = fromUrl ?? (parts.length === 2 && name !== void 0 ? { host: "github.com", owner: parts[0], name } : parts.length >= 3 && name !== void 0 ? { host: parts[0].toLowerCase(), owner: parts.slice(1, -1).join("/"), name } : void 0);
  if (repo === void 0)
    throw new CliError(`--repo must be host/owner/name or owner/name, got "${value}"`, 2);
  return repo;
}
function required(value, message) {
  if (value === void 0 || value === "") throw new CliError(message, 2);
  return value;
}
function readCodeowners(flags, ctx) {
  if (flags.codeowners !== void 0) {
    const text = ctx.readFile(path2.resolve(ctx.cwd, flags.codeowners));
    return required(text, `cannot read the CODEOWNERS file ${flags.codeowners}`);
  }
  const root = ctx.git(["rev-parse", "--show-toplevel"]) ?? ctx.cwd;
  for (const place of CODEOWNERS_PLACES) {
    const text = ctx.readFile(path2.join(root, place));
    if (text !== void 0) return text;
  }
  return void 0;
}
function serverUrl(flags, env) {
  const url = (flags.url ?? env["MAINLINE_URL"]?.trim()) || DEFAULT_URL;
  if (!/^https?:\/\/[^/]+/.test(url))
    throw new CliError(`--url must be an http:// or https:// URL, got "${url}"`, 2);
  return url.replace(/\/+$/, "");
}
function buildMeta(flags, ci, org, ctx) {
  const why = ci.provider === "local" ? "no CI detected and git could not tell" : `${ci.provider} did not say`;
  const meta = {
    repo: required(
      flags.repo === void 0 ? ci.repo : parseRepoFlag(flags.repo),
      `which repository? ${why}: pass --repo host/owner/name`
    ),
    org_url_slug: org,
    branch: required(flags.branch ?? ci.branch, `which branch? ${why}: pass --branch`),
    commit_sha: required(flags.sha ?? ci.commitSha, `which commit? ${why}: pass --sha`),
    pr_number: flags.pr === void 0 ? ci.prNumber : Number(flags.pr),
    pr_title: ci.prTitle,
    job_name: flags["job-name"] ?? ci.jobName,
    job_url: flags["job-url"] ?? ci.jobUrl,
    variant: flags.variant,
    run_attempt: ci.runAttempt,
    codeowners: readCodeowners(flags, ctx),
    upload_key: flags["upload-key"]
  };
  for (const key of Object.keys(meta)) {
    if (meta[key] === void 0) delete meta[key];
  }
  return meta;
}
function planUpload(flags, ctx) {
  const token = required(
    flags.token ?? ctx.env["MAINLINE_TOKEN"]?.trim(),
    "no API token: pass --token or set MAINLINE_TOKEN"
  );
  const org = required(
    flags.org ?? ctx.env["MAINLINE_ORG"]?.trim(),
    "no organization: pass --org <slug> or set MAINLINE_ORG"
  );
  const ci = detectCi(ctx.env, { git: ctx.git, readFile: ctx.readFile });
  return {
    url: serverUrl(flags, ctx.env),
    token,
    meta: buildMeta(flags, ci, org, ctx),
    patterns: flags.junit ?? [],
    json: flags.json === true,
    ci
  };
}
function size(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
function prepareFile(file, cwd) {
  const bytes = fs2.readFileSync(file);
  const gzipped = bytes[0] === 31 && bytes[1] === 139;
  const body = !gzipped && bytes.length > GZIP_ABOVE_BYTES ? gzipSync(bytes) : bytes;
  return { name: path2.relative(cwd, file).split(path2.sep).join("/"), body, original: bytes.length };
}
function collectFiles(plan, ctx, since) {
  const patterns = plan.patterns;
  const { files, unmatched } = expandGlobs(patterns, ctx.cwd);
  const fresh = since === void 0 ? files : files.filter((f) => fs2.statSync(f).mtimeMs >= since - 2e3);
  if (fresh.length < files.length) {
    ctx.out.err(`mainline: leaving out ${files.length - fresh.length} JUnit file(s) not written by this run`);
  }
  if (fresh.length > 0 && unmatched.length > 0) {
    ctx.out.err(`mainline: no files matched ${unmatched.map((p) => `"${p}"`).join(", ")}`);
  }
  const prepared = fresh.map((f) => prepareFile(f, ctx.cwd));
  if (prepared.length > 0) {
    const original = prepared.reduce((n, f) => n + f.original, 0);
    const sent = prepared.reduce((n, f) => n + f.body.length, 0);
    const compressed = sent === original ? "" : `, ${size(sent)} compressed`;
    ctx.out.err(
      `mainline: uploading ${prepared.length} JUnit file(s) (${size(original)}${compressed}) to ${plan.url}`
    );
  }
  return prepared;
}
function noFilesMessage(patterns) {
  return `no JUnit files matched ${patterns.map((p) => `"${p}"`).join(", ")}`;
}
async function sendAndReport(plan, files, print, warn = () => {
}) {
  const response = await postUpload(plan.url, plan.token, plan.meta, files, {
    onRetry: (message) => warn(`mainline: ${message}`)
  });
  print(plan.json ? JSON.stringify(response) : formatSummary(response, plan.url));
  return response;
}
async function upload(args, ctx) {
  const plan = planUpload(parseUploadFlags(args, "upload"), ctx);
  const files = collectFiles(plan, ctx);
  if (files.length === 0) throw new CliError(noFilesMessage(plan.patterns));
  await sendAndReport(plan, files, ctx.out.log, ctx.out.err);
  return 0;
}

// src/cli/test-command.ts
var FORWARDED = ["SIGTERM", "SIGHUP"];
function runCommand(command, ctx) {
  const [file, ...args] = command;
  const child = spawn(file, args, { stdio: "inherit", env: { ...ctx.env }, cwd: ctx.cwd });
  const forward = (signal) => child.kill(signal);
  const ignore = () => void 0;
  for (const signal of FORWARDED) process.on(signal, forward);
  process.on("SIGINT", ignore);
  return new Promise((resolve) => {
    child.once("error", (spawnError) => resolve({ spawnError }));
    child.once("exit", (code, signal) => resolve(signal === null ? { code: code ?? 1 } : { signal }));
  }).finally(() => {
    for (const signal of FORWARDED) process.off(signal, forward);
    process.off("SIGINT", ignore);
  });
}
async function uploadAfterRun(flags, ctx, startedAt) {
  try {
    const plan = planUpload(flags, ctx);
    const files = collectFiles(plan, ctx, startedAt);
    if (files.length === 0) throw new CliError(noFilesMessage(plan.patterns));
    return await sendAndReport(plan, files, plan.json ? ctx.out.log : ctx.out.err, ctx.out.err);
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    ctx.out.err(`mainline: test results not uploaded: ${error.message}`);
    return void 0;
  }
}
function exitAfterFailure(code, response, ctx) {
  const say = (s) => ctx.out.err(`mainline: ${s}`);
  if (response === void 0) {
    say(`keeping the command's exit code ${code}`);
    return code;
  }
  const failed = response.failed_tests;
  if (failed.length === 0) {
    say(
      `the command failed (exit code ${code}) but its reports list no failed tests; keeping exit code ${code}`
    );
    return code;
  }
  const unreadable = response.files.filter((f) => !f.ok).map((f) => f.name);
  if (unreadable.length > 0) {
    say(`some reports could not be read (${unreadable.join(", ")}); keeping exit code ${code}`);
    return code;
  }
  if (!response.all_failures_quarantined) {
    const open = failed.filter((t) => !t.quarantined);
    say(
      `${open.length} failed test(s) not quarantined, e.g. ${testLabel(open[0] ?? failed[0])}; exit code ${code}`
    );
    return code;
  }
  say(`every failed test is quarantined, so this run passes (the command exited with ${code}):`);
  for (const test of failed) ctx.out.err(`  quarantined: ${testLabel(test)}`);
  return 0;
}
async function testCommand(args, ctx) {
  const separator = args.indexOf("--");
  const command = separator === -1 ? [] : args.slice(separator + 1);
  if (command.length === 0) {
    throw new CliError(
      "test needs the command to run after --, e.g. mainline test --junit 'reports/*.xml' -- npm test",
      2,
      true
    );
  }
  const flags = parseUploadFlags(args.slice(0, separator), "test");
  const startedAt = Date.now();
  const outcome = await runCommand(command, ctx);
  if ("spawnError" in outcome) {
    const notFound = outcome.spawnError.code === "ENOENT";
    throw new CliError(
      `cannot run "${command[0]}": ${notFound ? "command not found" : outcome.spawnError.message}`,
      notFound ? 127 : 126
    );
  }
  if ("signal" in outcome) {
    ctx.out.err(`mainline: the command was killed by ${outcome.signal}; test results not uploaded`);
    return 128 + (os.constants.signals[outcome.signal] ?? 0);
  }
  const response = await uploadAfterRun(flags, ctx, startedAt);
  return outcome.code === 0 ? 0 : exitAfterFailure(outcome.code, response, ctx);
}

// src/cli/usage.ts
var UPLOAD_OPTIONS = `Upload options (flags win over what is detected from the CI's environment):
  --junit <glob>                 JUnit XML files, e.g. 'reports/**/*.xml' (repeatable; required)
  --org <slug>                   organization (default: MAINLINE_ORG)
  --token <token>                API token (default: MAINLINE_TOKEN)
  --url <url>                    server (default: MAINLINE_URL, else http://127.0.0.1:8080)
  --repo <host/owner/name>       repository; owner/name means github.com
  --branch <name>  --sha <commit>  --pr <number>
  --job-name <name>  --job-url <url>  --variant <name>  --upload-key <key>
  --codeowners <path>            default: CODEOWNERS in .github/, the root, docs/ or .gitlab/
  --json                         print the server's response as JSON`;
var GITHUB_LINES = `  github connect --org <slug> --installation <id>
                                 bind a GitHub App installation to an organization: the account it is
                                 installed on (asked from GitHub) becomes that organization's
  github grant --org <slug> --owner <login>
                                 with a personal token: let the organization act on the GitHub user or
                                 organization <login> (one organization per account)
  github revoke --org <slug> --owner <login>
                                 take the account away from the organization
  github list [--org <slug>] [--json]
                                 the accounts each organization may act on`;
var GITLAB_LINES = `  gitlab grant --org <slug> --namespace <group[/subgroup] or user>
                                 let the organization act on the GitLab namespace's projects
                                 (exact path: a subgroup is granted on its own)
  gitlab revoke --org <slug> --namespace <path>
                                 take the namespace away from the organization
  gitlab list [--org <slug>] [--json]
                                 the namespaces each organization may act on`;
var TOKEN_LINES = `  token create --org <slug>      create a token (and the organization if needed); prints the token once
         [--name <label>] [--json]
  token list [--org <slug>] [--json]
                                 list tokens (never the tokens themselves)
  token revoke <token-id>        revoke a token; requests with it get 401 at once`;
var USAGE = `Usage: mainline <command> [options]

Commands:
  serve                          start the server (what npm start runs)
  migrate                        apply pending database migrations and exit
${TOKEN_LINES}
${GITHUB_LINES}
${GITLAB_LINES}
  upload --junit <glob> [options]
                                 send JUnit XML reports to a Mainline server (from CI)
  test [upload options] -- <command…>
                                 run the command, upload its JUnit reports, and exit 0 when
                                 every failed test is quarantined
  demo [--port <n>] [--exit]     start a server with a local git repository, run PRs (flaky, broken,
                                 conflicting) through the merge queue with a built-in CI, and print
                                 curl commands to explore the results
  help [<command>]               show this text, or a command's own (also: mainline <command> --help)

${UPLOAD_OPTIONS}

Configuration comes from environment variables; see README.md.`;
var SERVE_USAGE = `Usage: mainline serve

Starts the server: migrates the database, then answers the API, the dashboard and /metrics, and runs
the merge-queue runner. SIGTERM or Ctrl-C stops it after in-flight requests finish.

Configuration comes from environment variables (README.md, "Configuration"), among them:
  HOST, PORT                     where to listen (default 127.0.0.1:8080)
  DATABASE_URL                   postgres://… for PostgreSQL; unset: SQLite under MAINLINE_DATA_DIR
  MAINLINE_DATA_DIR              the data folder (default ./data)
  MAINLINE_BOOTSTRAP_ORG, MAINLINE_BOOTSTRAP_TOKEN
                                 create an organization and its first token on start`;
var MIGRATE_USAGE = `Usage: mainline migrate

Applies pending database migrations (DATABASE_URL, else SQLite under MAINLINE_DATA_DIR) and exits.
mainline serve migrates on start as well.`;
var TOKEN_USAGE = `Usage: mainline token <create|list|revoke> [options]

${TOKEN_LINES}

Reads the database directly (DATABASE_URL, else SQLite under MAINLINE_DATA_DIR): run it where the
server's data is.`;
var GITHUB_USAGE = `Usage: mainline github <connect|grant|revoke|list> [options]

${GITHUB_LINES}

Reads the database directly, and the GitHub settings (MAINLINE_GITHUB_*) from the environment.`;
var GITLAB_USAGE = `Usage: mainline gitlab <grant|revoke|list> [options]

${GITLAB_LINES}

Reads the database directly, and the GitLab settings (MAINLINE_GITLAB_*) from the environment;
docs/gitlab.md says how to connect a GitLab instance.`;
var UPLOAD_USAGE = `Usage: mainline upload --junit <glob> [options]

Sends JUnit XML reports to a Mainline server, with the repository, branch and commit detected from the
CI's environment (GitHub Actions, GitLab, Buildkite, CircleCI, Jenkins, Azure, Bitbucket) or git.
Exits 0 once the server accepted them, whatever the tests' results.

${UPLOAD_OPTIONS}`;
var TEST_USAGE = `Usage: mainline test [upload options] -- <command…>

Runs the command, uploads the JUnit reports it wrote, and exits with the command's exit code, or 0
when every failed test is quarantined. Reports older than the run are left out.

${UPLOAD_OPTIONS}`;
var DEMO_USAGE = `Usage: mainline demo [--port <n>] [--data-dir <dir>] [--exit] [--timeout <seconds>] [--forge git|gitlab]

Starts a server with a local git repository, opens five pull requests (clean, flaky, broken,
conflicting), runs them through the merge queue with a built-in CI that uploads JUnit results,
and prints what happened with curl commands to explore it. The server keeps running until Ctrl-C.

  --port <n>          port on 127.0.0.1 (default 8080; 0 picks a free one)
  --data-dir <dir>    an empty folder to keep the data in (default: a temporary folder, removed at the end)
  --exit, --once      stop once the scenario is over: exit 0 if it ended as expected, 1 if not
  --timeout <seconds> how long the scenario may take (default 90)
  --log-level <level> the server's log level (default warn): fatal, error, warn, info, debug, trace, silent
  --forge gitlab      run it on a GitLab simulator (merge requests, pipelines' job statuses, webhooks)`;
var COMMAND_USAGE = {
  serve: SERVE_USAGE,
  migrate: MIGRATE_USAGE,
  token: TOKEN_USAGE,
  github: GITHUB_USAGE,
  gitlab: GITLAB_USAGE,
  upload: UPLOAD_USAGE,
  test: TEST_USAGE,
  demo: DEMO_USAGE,
  help: USAGE
};
function asksForHelp(args) {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === "--help" || a === "-h");
}

// src/cli/uploader.ts
var NAME = "mainline-upload";
function ownUsage(text) {
  return text.replace(/\bmainline (upload|test)\b/g, `${NAME} $1`);
}
var UPLOADER_USAGE = `Usage: ${NAME} <command> [options]

Sends JUnit XML test results to a Mainline server from CI (the client commands of \`mainline\`, alone).

Commands:
  upload --junit <glob> [options]
                                 send JUnit XML reports; exits 0 once the server accepted them
  test [upload options] -- <command…>
                                 run the command, upload its JUnit reports, and exit 0 when every
                                 failed test is quarantined (else with the command's exit code)
  help [<command>]               show this text, or a command's own (also: <command> --help)
  --version                      print the version

The server, token and organization come from --url, --token, --org or MAINLINE_URL, MAINLINE_TOKEN,
MAINLINE_ORG; the repository, branch and commit from the CI's environment or git.
${NAME} upload --help lists every option.`;
var COMMANDS = ["upload", "test"];
function usageOf(command) {
  return COMMANDS.includes(command) ? ownUsage(COMMAND_USAGE[command]) : void 0;
}
function report(error, out2, usage) {
  if (error instanceof CliError) {
    out2.err(`${NAME}: ${error.message}${error.showUsage ? `

${usage}` : ""}`);
    return error.exitCode;
  }
  const e = error;
  if (e.code?.startsWith("ERR_PARSE_ARGS_")) {
    out2.err(`${NAME}: ${e.message}

${usage}`);
    return 2;
  }
  out2.err(`${NAME}: ${e.stack ?? String(error)}`);
  return 1;
}
async function uploaderMain(argv, out2, version) {
  const [command, ...rest] = argv;
  if (command === void 0 || command === "--help" || command === "-h") {
    out2.log(UPLOADER_USAGE);
    return 0;
  }
  if (command === "--version" || command === "-v") {
    out2.log(version);
    return 0;
  }
  if (command === "help") {
    const text = rest[0] === void 0 ? UPLOADER_USAGE : usageOf(rest[0]);
    if (text !== void 0) {
      out2.log(text);
      return 0;
    }
    return report(new CliError(`no help for "${rest[0]}": unknown command`, 2, true), out2, UPLOADER_USAGE);
  }
  const usage = usageOf(command);
  if (usage === void 0) {
    const hint = ["serve", "migrate", "token", "github", "demo"].includes(command) ? ` (${NAME} only uploads; "${command}" is a command of the full \`mainline\` package)` : "";
    return report(new CliError(`unknown command "${command}"${hint}`, 2, true), out2, UPLOADER_USAGE);
  }
  if (asksForHelp(rest)) {
    out2.log(usage);
    return 0;
  }
  try {
    const ctx = clientContext(out2);
    return await (command === "upload" ? upload(rest, ctx) : testCommand(rest, ctx));
  } catch (error) {
    if (error instanceof CliError) error.message = ownUsage(error.message);
    return report(error, out2, usage);
  }
}

// mainline-upload.mjs
var out = {
  log: (s) => process.stdout.write(s + "\n"),
  err: (s) => process.stderr.write(s + "\n")
};
process.exitCode = await uploaderMain(process.argv.slice(2), out, "0.1.0");
