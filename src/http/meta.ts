import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { AppError } from '../domain/errors.ts';
import { findNul, nulError, type SchemaIssue, toDetails, wellFormedStrings } from './validation.ts';

/**
 * Validates a JSON document that does not arrive as the request body (the `meta` part of a
 * multipart upload, a bundle's meta.json) against a schema, with the same error details as bodies.
 */
export function validatorFor<T>(schema: TSchema, label: string): (raw: string | unknown) => T {
  const check = Compile(schema);
  return (raw) => {
    let value: unknown = raw;
    if (typeof raw === 'string') {
      try {
        value = JSON.parse(raw);
      } catch (error) {
        throw new AppError('INVALID_JSON', `${label} is not valid JSON: ${(error as Error).message}`);
      }
    }
    const nul = findNul(value);
    if (nul !== undefined) throw nulError(nul.replace(/^\$/, label));
    value = wellFormedStrings(value);
    if (check.Check(value)) return value as T;
    const details = toDetails([...check.Errors(value)] as unknown as SchemaIssue[], label);
    const shown = details
      .slice(0, 3)
      .map((d) => d.message)
      .join('; ');
    throw new AppError('VALIDATION_FAILED', `Invalid ${label}: ${shown}`, { details });
  };
}
