/**
 * A GitHub simulator for tests: the REST subset of .scratch/github-rest-subset.md over real bare git
 * repositories, signed webhooks to a configured URL, GitHub App auth, and fault injection.
 *
 *   const sim = await startGitHubSimulator({ webhookSecret: 's', webhookUrl });
 *   await sim.createRepo('acme', 'widgets');
 *   const n = await sim.openPullRequest('acme', 'widgets', { head: 'f', title: 'F', files: { 'a.txt': 'a\n' } });
 *   new Octokit({ baseUrl: sim.url });
 */
export { type AppKeyPair, generateAppKeyPair } from './auth.ts';
export type { FaultInjector, FaultResponse, FaultRule } from './faults.ts';
export { type ReceivedWebhook, startWebhookReceiver, type WebhookReceiver } from './receiver.ts';
export type { WorkflowRunOptions, WorkflowRunState } from './routes-actions.ts';
export { GitHubSimulator, startGitHubSimulator } from './simulator.ts';
export type {
  CheckConclusion,
  CheckRunState,
  CompleteCheckOptions,
  CreateRepoOptions,
  Delivery,
  JsonObject,
  OpenPullRequestOptions,
  PullRequestView,
  RequestRecord,
  SetStatusOptions,
  SimulatorAppOptions,
  SimulatorOptions,
  StatusState,
  WebhookPayload,
} from './types.ts';
export { signWebhook } from './webhooks.ts';
