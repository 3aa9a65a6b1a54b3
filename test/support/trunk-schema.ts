import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import formats from 'ajv-formats';

const addFormats = formats as unknown as (ajv: Ajv) => void;

/**
 * Validators built from Trunk's published v1 OpenAPI schemas (a copy of shared/reference/openapi),
 * so responses are checked against the upstream contract, not only against our own schemas.
 */
const doc = JSON.parse(
  readFileSync(new URL('../fixtures/trunk-openapi.condensed.json', import.meta.url), 'utf8'),
);
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: 'trunk', components: doc.components });

export function trunkValidator(schemaName: string) {
  const validate = ajv.getSchema(`trunk#/components/schemas/${schemaName}`);
  if (validate === undefined) throw new Error(`no schema ${schemaName}`);
  return (value: unknown): string[] =>
    validate(value) ? [] : (validate.errors ?? []).map((e: ErrorObject) => `${e.instancePath} ${e.message}`);
}
