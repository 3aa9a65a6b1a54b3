export { BareRepo } from '../../../src/demo/gitlab-sim/git.ts';
export {
  type Delivery,
  GitLabSimulator,
  type JobStatus,
  type MergeMethod,
} from '../../../src/demo/gitlab-sim/simulator.ts';
export { GitLabScenario, GL_PATH, GL_REPO, GL_SECRET, GL_TOKEN } from './scenario.ts';
