import type { KeyObject } from 'node:crypto';

/** A JSON object as the simulator sends and receives it. */
export type JsonObject = { [key: string]: unknown };

/** The GitHub App the simulator trusts: JWTs signed with its key may mint installation tokens. */
export interface SimulatorAppOptions {
  id: number;
  /** PEM (PKCS#8 or PKCS#1); its public half verifies JWTs when publicKey is not given. */
  privateKey?: string;
  /** PEM (SPKI or PKCS#1) or a KeyObject. */
  publicKey?: string | KeyObject;
  /** The app's slug; its bot user is `<slug>[bot]` (default "mainline"). */
  slug?: string;
}

export interface SimulatorOptions {
  /** Where webhooks are POSTed; without one, deliveries are recorded as undelivered. */
  webhookUrl?: string;
  /** HMAC-SHA256 key of x-hub-signature-256. */
  webhookSecret: string;
  /** Accept this GitHub App's JWTs and the installation tokens they mint. */
  app?: SimulatorAppOptions;
  /** Accept this personal access token on REST calls. */
  token?: string;
  /** Login of the user the personal access token belongs to (default "mainline-bot"). */
  tokenLogin?: string;
  /** Lifetime of installation tokens (default 3600). */
  installationTokenTtlSeconds?: number;
}

/** A webhook payload: always carries repository and sender; installation when an app is configured. */
export type WebhookPayload = { action?: string } & JsonObject;

/** One attempt at delivering a webhook. */
export interface Delivery {
  /** x-github-delivery (a redelivery keeps the original's). */
  id: string;
  event: string;
  payload: WebhookPayload;
  /** The exact bytes sent. */
  body: string;
  /** The x-hub-signature-256 header sent. */
  signature: string;
  url: string | null;
  /** HTTP status the receiver answered; null when not delivered (no URL, or a network error). */
  status: number | null;
  error?: string;
  redelivery: boolean;
  at: number;
}

/** One REST request the simulator received. */
export interface RequestRecord {
  method: string;
  /** Decoded path without the query string, e.g. /repos/acme/widgets/git/ref/heads/main. */
  path: string;
  query: string;
  status: number;
  /** Answered by an injected fault. */
  fault: boolean;
}

export type MergeMethod = 'merge' | 'squash' | 'rebase';
export type CheckConclusion =
  | 'success'
  | 'failure'
  | 'neutral'
  | 'cancelled'
  | 'skipped'
  | 'timed_out'
  | 'action_required';
export type StatusState = 'pending' | 'success' | 'failure' | 'error';

export interface PullState {
  id: number;
  number: number;
  title: string;
  body: string | null;
  author: string;
  headRef: string;
  headSha: string;
  baseRef: string;
  draft: boolean;
  state: 'open' | 'closed';
  merged: boolean;
  mergedAt: string | null;
  mergedBy: string | null;
  mergeCommitSha: string | null;
  closedAt: string | null;
  createdAt: string;
  updatedAt: string;
  /** GETs that still answer mergeable: null (GitHub computing it). */
  mergeableUnknownReads: number;
}

export interface CommentState {
  id: number;
  issue: number;
  body: string;
  user: string;
  createdAt: string;
  updatedAt: string;
}

export interface StatusRecord {
  id: number;
  sha: string;
  state: StatusState;
  context: string;
  description: string | null;
  targetUrl: string | null;
  creator: string;
  createdAt: string;
}

export interface CheckRunState {
  id: number;
  name: string;
  headSha: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: CheckConclusion | null;
  detailsUrl: string | null;
  externalId: string | null;
  output: { title: string | null; summary: string | null; text: string | null };
  startedAt: string;
  completedAt: string | null;
  app: { id: number | null; slug: string };
  suiteId: number;
}

export interface ProtectionState {
  contexts: string[];
  strict: boolean;
  /** Refuse PR merges and branch updates whose commit lacks the contexts (default true). */
  enforce: boolean;
}

export interface RulesetState {
  id: number;
  /** Branch name, or a glob with `*`. */
  branch: string;
  contexts: string[];
  enforce: boolean;
}

export interface CreateRepoOptions {
  defaultBranch?: string;
  /** Files of the initial commit (default a README.md). */
  files?: Record<string, string>;
}

export interface OpenPullRequestOptions {
  head: string;
  /** Default: the repository's default branch. */
  base?: string;
  title: string;
  author?: string;
  body?: string;
  draft?: boolean;
  /** Committed onto head first (creating head from base when missing). */
  files?: Record<string, string | null>;
}

export interface CompleteCheckOptions {
  name: string;
  conclusion: CheckConclusion;
  detailsUrl?: string;
  output?: { title?: string; summary?: string };
  /** The CI app reporting (default GitHub Actions, id 15368). */
  app?: { id: number; slug: string };
}

export interface SetStatusOptions {
  context: string;
  state: StatusState;
  targetUrl?: string;
  description?: string;
  creator?: string;
}

/** The fields of a pull request tests usually look at (the object carries every REST field). */
export interface PullRequestView extends JsonObject {
  number: number;
  title: string;
  state: 'open' | 'closed';
  merged: boolean;
  draft: boolean;
  mergeable: boolean | null;
  mergeable_state: string;
  merge_commit_sha: string | null;
  user: { login: string };
  head: { ref: string; sha: string };
  base: { ref: string; sha: string };
}
