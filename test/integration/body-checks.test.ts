// The checks of every JSON body's strings (src/http/body-checks.ts): a body whose text has no `\u0000`
// and no surrogate escape is not walked, so these pin that every way a NUL or a lone surrogate can be
// written in JSON text is still seen (escapes in either case, in keys, deep in arrays), that text which
// only looks like an escape is not refused, and that the parser's own errors are unchanged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/app.ts';

let t: TestApp;
let token: string;

beforeAll(async () => {
  t = await buildTestApp();
  token = await t.token('acme');
});
afterAll(async () => t.close());

/** POSTs raw JSON text (not re-encoded by JSON.stringify, which writes escapes its own way). */
function raw(url: string, text: string) {
  return t.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', 'x-api-token': token },
    payload: text,
  });
}

const create = (owner: string) =>
  raw('/v1/repositories/create', `{"repo":{"host":"github.com","owner":"${owner}","name":"web"}}`);

describe('JSON body checks', () => {
  it('refuses a NUL however it is placed, naming the field', async () => {
    const cases: [string, string][] = [
      ['{"repo":{"host":"github.com","owner":"a\\u0000b","name":"web"}}', '$.repo.owner'],
      ['{"repo":{"host":"github.com","owner":"a","name":"web"},"x\\u0000":1}', '$.x\u0000'],
      [
        '{"repo":{"host":"github.com","owner":"a","name":"web"},"orgUrlSlug":"acme","testIdentifiers":[{"name":"ok"},{"name":"b\\u0000"}]}',
        '$.testIdentifiers[1].name',
      ],
    ];
    for (const [i, [text, path]] of cases.entries()) {
      const url = i === 2 ? '/v1/metrics/getQuarantineConfig' : '/v1/repositories/create';
      const res = await raw(url, text);
      expect(res.statusCode, text).toBe(400);
      expect(res.json().error.message, text).toBe(
        `${path} contains a NUL character (\\u0000), which is not allowed`,
      );
    }
  });

  it('makes a lone surrogate U+FFFD whatever the case of its escape, and keeps a pair', async () => {
    const cases = [
      ['\\uD83D', '\ufffd'],
      ['\\ud83d', '\ufffd'],
      ['\\uDe00', '\ufffd'],
      ['\\uD83D\\uDE00', '\ud83d\ude00'],
    ] as const;
    for (const [i, [written, stored]] of cases.entries()) {
      const res = await create(`own${i}${written}er`);
      expect(res.statusCode, written).toBe(200);
      expect(res.json().repository.owner, written).toBe(`own${i}${stored}er`);
      // As stored: the drivers would each write a lone surrogate their own way (three U+FFFD on SQLite).
      const row = await t.db.database.db
        .selectFrom('repositories')
        .select('owner')
        .where('id', '=', res.json().repository.id)
        .executeTakeFirstOrThrow();
      expect(row.owner, written).toBe(`own${i}${stored}er`);
    }
  });

  it('accepts text that only looks like an escape (an escaped backslash before u0000)', async () => {
    const res = await create('back\\\\u0000slash');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().repository.owner).toBe('back\\u0000slash');
  });

  it('answers an empty, malformed or prototype-poisoning body as before', async () => {
    const answers = [];
    for (const text of ['', '{"repo":', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}']) {
      const res = await raw('/v1/repositories/create', text);
      answers.push([res.statusCode, res.json().error.code, res.json().error.message]);
    }
    expect(answers).toEqual(EXPECTED_PARSE_ERRORS);
  });
});

const NOT_JSON = [400, 'INVALID_JSON', 'The body is not valid JSON; send a JSON object'];
const EXPECTED_PARSE_ERRORS = [
  [400, 'INVALID_JSON', 'The body is empty but Content-Type is application/json: send a JSON object'],
  NOT_JSON,
  NOT_JSON,
  NOT_JSON,
];
