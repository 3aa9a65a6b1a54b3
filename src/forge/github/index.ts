export {
  type GitHubApi,
  type GitHubAuth,
  GitHubClient,
  type GitHubClientOptions,
  type GitHubLog,
} from './client.ts';
export { GitHubForge, type GitHubForgeOptions } from './forge.ts';
export { COMMENT_MARKER, type ReportInput, STATUS_CONTEXT, type TalkBack } from './report.ts';
