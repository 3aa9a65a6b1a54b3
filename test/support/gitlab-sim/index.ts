export { BareRepo } from './git.ts';
export { GitLabScenario, GL_PATH, GL_REPO, GL_SECRET, GL_TOKEN } from './scenario.ts';
export { type Delivery, GitLabSimulator, type JobStatus, type MergeMethod } from './simulator.ts';
