/**
 * Replay of trunk-io/terraform-provider-trunk, read at commit 532679b9918a9f0f67a6a1dcc3409edf818274ff
 * (internal/client/client.go, merge_queue.go, types.go; internal/provider/merge_queue_resource.go and
 * merge_queue_resource_model.go). Written from what it sends and how it reads the answers, not from its code:
 *
 * - every call is `POST <base_url>/<endpoint>` (base_url default https://api.trunk.io/v1) with the headers
 *   Content-Type: application/json, x-api-token and x-source: terraform, a body from Go's json.Marshal
 *   (compact, struct field order, `<`, `>`, `&` escaped) and Go's own User-Agent and Accept-Encoding;
 * - any 2xx is success; a status >= 500 is tried again (3 more times), a 4xx is not;
 * - create = createQueue {repo, targetBranch, mode?, concurrency?} (its answer is not read) then updateQueue
 *   with the attributes set in the configuration (pointer fields: left out when not set, `false` and `[]`
 *   are sent); a configuration without required_statuses sends deleteRequiredStatuses: true;
 * - getQueue / updateQueue answers are decoded by encoding/json into the Queue struct: a field that is
 *   missing reads as false, "" or 0 (no error), `requiredStatuses: null` reads as "no override";
 * - every attribute is then set from the answer; terraform refuses ("Provider produced inconsistent
 *   result after apply") when an attribute's planned value differs from what was read back. The plan is the
 *   configuration's value, else (update) the prior state's (UseStateForUnknown), else unknown (create);
 * - 409 on createQueue: "already exists, import it"; 404 on getQueue: the resource leaves the state;
 *   400 on deleteQueue: "queue is not empty", set state draining first.
 */
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO } from '../support/app.ts';
import { GitScenario } from '../support/git-scenario.ts';
import { type HttpAnswer, sendRequest } from '../support/http-answer.ts';

/** The resource's attributes (terraform names), as the model holds them; undefined: unknown. */
type Attr = string | number | boolean | string[] | null;
type Model = Record<string, Attr>;

/** The provider's Queue fields in Go struct order: [json name, terraform attribute, Go kind]. */
const FIELDS: [string, string, 'string' | 'int' | 'bool'][] = [
  ['mode', 'mode', 'string'],
  ['concurrency', 'concurrency', 'int'],
  ['state', 'state', 'string'],
  ['testingTimeoutMinutes', 'testing_timeout_minutes', 'int'],
  ['pendingFailureDepth', 'pending_failure_depth', 'int'],
  ['canOptimisticallyMerge', 'can_optimistically_merge', 'bool'],
  ['batch', 'batch', 'bool'],
  ['batchingMaxWaitTimeMinutes', 'batching_max_wait_time_minutes', 'int'],
  ['batchingMinSize', 'batching_min_size', 'int'],
  ['createPrsForTestingBranches', 'create_prs_for_testing_branches', 'bool'],
  ['mergeMethod', 'merge_method', 'string'],
  ['commentsEnabled', 'comments_enabled', 'bool'],
  ['commandsEnabled', 'commands_enabled', 'bool'],
  ['statusCheckEnabled', 'status_check_enabled', 'bool'],
  ['directMergeMode', 'direct_merge_mode', 'string'],
  ['optimizationMode', 'optimization_mode', 'string'],
  ['bisectionConcurrency', 'bisection_concurrency', 'int'],
  ['extensionEnabled', 'extension_enabled', 'bool'],
  ['enqueueingLabel', 'enqueueing_label', 'string'],
  ['labelCommandsEnabled', 'label_commands_enabled', 'bool'],
  ['stateLabelsEnabled', 'state_labels_enabled', 'bool'],
];
/** UpdateQueueRequest's optional fields are in another order than Queue's: its own struct order. */
const UPDATE_ORDER = [
  'mode',
  'concurrency',
  'state',
  'testingTimeoutMinutes',
  'pendingFailureDepth',
  'canOptimisticallyMerge',
  'batch',
  'batchingMaxWaitTimeMinutes',
  'batchingMinSize',
  'mergeMethod',
  'commentsEnabled',
  'commandsEnabled',
  'createPrsForTestingBranches',
  'statusCheckEnabled',
  'directMergeMode',
  'optimizationMode',
  'bisectionConcurrency',
  'extensionEnabled',
  'enqueueingLabel',
  'labelCommandsEnabled',
  'stateLabelsEnabled',
];
const ATTRS = [...FIELDS.map(([, attr]) => attr), 'required_statuses'];
const attrOf = (json: string) => FIELDS.find(([j]) => j === json)?.[1] as string;

/** Go's json.Marshal of plain data: compact, keys in the order given, and <, >, & escaped as \u00XX. */
function goMarshal(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** One attempt of the client's doRequestOnce: POST with its headers and Go's, over a real socket. */
function postOnce(port: number, token: string, endpoint: string, body: string): Promise<HttpAnswer> {
  return sendRequest(
    {
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: `/v1/${endpoint}`,
      agent: false,
      headers: {
        'User-Agent': 'Go-http-client/1.1',
        'Content-Length': Buffer.byteLength(body),
        'Content-Type': 'application/json',
        'X-Api-Token': token,
        'X-Source': 'terraform',
        'Accept-Encoding': 'gzip',
      },
    },
    body,
  );
}

/** The client's APIError: any status outside 2xx, with the body as text. */
class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`API error ${status}: ${body}`);
  }
}

/** doRequest: up to 3 more tries on a 5xx (no back-off needed here), none on a 4xx. */
async function doRequest(port: number, token: string, endpoint: string, body: object): Promise<string> {
  let last: HttpAnswer = { status: 0, body: '' };
  for (let attempt = 0; attempt <= 3; attempt++) {
    last = await postOnce(port, token, endpoint, goMarshal(body));
    if (last.status >= 200 && last.status < 300) return last.body;
    if (last.status < 500) break;
  }
  throw new ApiError(last.status, last.body);
}

/** encoding/json into the Queue struct: missing fields are zero values; a wrong type is an error. */
function decodeQueue(text: string): Model {
  const raw = JSON.parse(text) as Record<string, unknown>;
  const out: Model = {};
  for (const [json, attr, kind] of FIELDS) {
    const v = raw[json];
    if (v === undefined || v === null) {
      out[attr] = kind === 'string' ? '' : kind === 'int' ? 0 : false;
      continue;
    }
    const fits =
      kind === 'string'
        ? typeof v === 'string'
        : kind === 'bool'
          ? typeof v === 'boolean'
          : Number.isInteger(v);
    if (!fits) throw new Error(`unmarshaling response: ${json} is ${JSON.stringify(v)}, not a Go ${kind}`);
    out[attr] = v as Attr;
  }
  const rs = raw['requiredStatuses'];
  if (rs !== undefined && rs !== null && !(Array.isArray(rs) && rs.every((s) => typeof s === 'string')))
    throw new Error('unmarshaling response: requiredStatuses is not a list of strings');
  out['required_statuses'] = (rs as string[] | null | undefined) ?? null;
  return out;
}

/** toUpdateRequest: the configured attributes (values from the plan), in UpdateQueueRequest's field order. */
function updateRequest(branch: string, config: Model): Record<string, unknown> {
  const body: Record<string, unknown> = {
    repo: { host: REPO.host, owner: REPO.owner, name: REPO.name },
    targetBranch: branch,
  };
  for (const json of UPDATE_ORDER) {
    const v = config[attrOf(json)];
    if (v !== undefined && v !== null) body[json] = v;
  }
  const statuses = config['required_statuses'];
  if (statuses === undefined || statuses === null) body['deleteRequiredStatuses'] = true;
  else body['requiredStatuses'] = statuses;
  return body;
}

/** The plan: the configuration's value, else the prior state's (UseStateForUnknown), else unknown. */
function plan(config: Model, prior: Model | undefined): Record<string, Attr | undefined> {
  return Object.fromEntries(
    ATTRS.map((a) => [a, config[a] !== undefined && config[a] !== null ? config[a] : prior?.[a]]),
  );
}

/** Terraform's check after apply: every attribute whose planned value was known reads back as planned. */
function inconsistencies(planned: Record<string, Attr | undefined>, state: Model): string[] {
  return ATTRS.filter(
    (a) => planned[a] !== undefined && JSON.stringify(planned[a]) !== JSON.stringify(state[a]),
  ).map((a) => `.${a}: was ${JSON.stringify(planned[a])}, but now ${JSON.stringify(state[a])}`);
}

/** The provider's resource operations against one base URL with one API key. */
class Provider {
  constructor(
    readonly port: number,
    readonly token: string,
  ) {}

  async create(branch: string, config: Model): Promise<Model> {
    const create: Record<string, unknown> = {
      repo: { host: REPO.host, owner: REPO.owner, name: REPO.name },
      targetBranch: branch,
    };
    if (typeof config['mode'] === 'string' && config['mode'] !== '') create['mode'] = config['mode'];
    if (typeof config['concurrency'] === 'number' && config['concurrency'] !== 0)
      create['concurrency'] = config['concurrency'];
    await doRequest(this.port, this.token, 'createQueue', create);
    return this.#apply(branch, config, undefined);
  }

  update(branch: string, config: Model, prior: Model): Promise<Model> {
    return this.#apply(branch, config, prior);
  }

  async #apply(branch: string, config: Model, prior: Model | undefined): Promise<Model> {
    const planned = plan(config, prior);
    const state = decodeQueue(
      await doRequest(this.port, this.token, 'updateQueue', updateRequest(branch, config)),
    );
    const wrong = inconsistencies(planned, state);
    if (wrong.length > 0)
      throw new Error(`Provider produced inconsistent result after apply:\n${wrong.join('\n')}`);
    return state;
  }

  /** Read: the state from getQueue, or null when the queue is gone (404: removed from the state). */
  async read(branch: string): Promise<Model | null> {
    const body = { repo: { host: REPO.host, owner: REPO.owner, name: REPO.name }, targetBranch: branch };
    try {
      return decodeQueue(await doRequest(this.port, this.token, 'getQueue', body));
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return null;
      throw error;
    }
  }

  async delete(branch: string): Promise<void> {
    const body = { repo: { host: REPO.host, owner: REPO.owner, name: REPO.name }, targetBranch: branch };
    await doRequest(this.port, this.token, 'deleteQueue', body);
  }
}

/** A configuration setting every attribute the resource has. */
const EVERYTHING: Model = {
  mode: 'parallel',
  concurrency: 4,
  state: 'paused',
  testing_timeout_minutes: 90,
  pending_failure_depth: 0,
  can_optimistically_merge: true,
  batch: true,
  batching_max_wait_time_minutes: 5,
  batching_min_size: 2,
  create_prs_for_testing_branches: false,
  merge_method: 'squash',
  comments_enabled: false,
  commands_enabled: true,
  status_check_enabled: false,
  direct_merge_mode: 'always',
  optimization_mode: 'bisection_skip_redundant_tests',
  bisection_concurrency: 3,
  extension_enabled: true,
  enqueueing_label: 'ready-to-merge',
  label_commands_enabled: true,
  state_labels_enabled: true,
  required_statuses: ['build', 'test & lint <ci>'],
};

describe('trunk-io/terraform-provider-trunk against Mainline', () => {
  let s: GitScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  const provider = async () => {
    s = await GitScenario.create();
    await s.t.app.listen({ host: '127.0.0.1', port: 0 });
    return new Provider((s.t.app.server.address() as AddressInfo).port, s.token);
  };

  it('create → read → update every attribute (the four label fields too) → read → destroy, consistent at every apply', async () => {
    const tf = await provider();
    const branch = 'release/2026';

    // A configuration with nothing but the queue's identity: what the server chose is read back.
    const created = await tf.create(branch, {});
    expect(created).toMatchObject({
      state: 'running',
      extension_enabled: false,
      enqueueing_label: '',
      label_commands_enabled: false,
      state_labels_enabled: false,
    });
    expect(await tf.read(branch)).toEqual(created);

    // Every attribute set: each reads back exactly as configured, and a refresh finds no drift.
    const everything = await tf.update(branch, EVERYTHING, created);
    expect(await tf.read(branch)).toEqual(everything);

    // Change the four label fields and empty the status override; the attributes left out keep their values.
    const changed = await tf.update(
      branch,
      {
        extension_enabled: false,
        enqueueing_label: 'merge-queue',
        label_commands_enabled: false,
        state_labels_enabled: false,
        required_statuses: [],
        state: 'running',
      },
      everything,
    );
    expect(changed).toMatchObject({ mode: 'parallel', concurrency: 4, required_statuses: [], batch: true });
    expect(await tf.read(branch)).toEqual(changed);

    // A second resource for the same queue: 409, which the provider turns into "import it".
    const again = await tf.create(branch, {}).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(ApiError);
    expect((again as ApiError).status).toBe(409);

    await tf.delete(branch);
    // Refresh after the queue is gone: 404, so the resource leaves the state.
    expect(await tf.read(branch)).toBeNull();
  });

  it('the provider created a queue from a configuration with every attribute at once (create + update in one apply)', async () => {
    const tf = await provider();
    const state = await tf.create('staging', EVERYTHING);
    expect(state).toMatchObject({ enqueueing_label: 'ready-to-merge', pending_failure_depth: 0 });
    expect(await tf.read('staging')).toEqual(state);
  });

  it('destroying a queue with PRs in it answers 400, the status the provider reads as "drain it first"', async () => {
    const tf = await provider();
    await s!.openPr(1, { 'a.txt': 'a\n' });
    await s!.submit(1);
    const refused = await tf.delete('main').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(400);
    expect(JSON.parse((refused as ApiError).body).error.message).toMatch(/draining/);
    expect(await tf.read('main')).not.toBeNull();
  });

  it('an enqueueing label GitHub could not have is a 400 naming the field, and nothing is stored', async () => {
    const tf = await provider();
    const before = await tf.read('main');
    for (const label of ['mainline:queued', 'x'.repeat(51), ' padded ']) {
      const refused = await tf
        .update('main', { enqueueing_label: label, batch: true }, before!)
        .catch((e) => e);
      expect(refused, label).toBeInstanceOf(ApiError);
      expect((refused as ApiError).status).toBe(400);
      expect((refused as ApiError).body).toMatch(/enqueueingLabel/);
    }
    expect(await tf.read('main')).toEqual(before);
  });
});
