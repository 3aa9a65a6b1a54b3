import { type Html, html } from '../html.ts';

/**
 * A form's refused values shown beside their fields: `errorOf` is a field's messages (empty when it
 * has none), `described` the attributes that mark the field invalid and point at those messages.
 */
export function fieldErrors(
  errors: ReadonlyMap<string, readonly string[]>,
  fieldId: (name: string) => string,
) {
  return {
    errorOf: (field: string): Html | '' => {
      const messages = errors.get(field);
      return messages === undefined
        ? ''
        : html`<p class="field-error" id="${fieldId(field)}-error">${messages.join('; ')}</p>`;
    },
    described: (field: string) =>
      errors.has(field) ? html` aria-invalid="true" aria-describedby="${fieldId(field)}-error"` : '',
  };
}
