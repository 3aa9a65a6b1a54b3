// The JSON of recent answers of a read route, by a key that names one exact answer (the app layer
// makes it from everything the answer depends on, the repository's health_version among them).
// Serializing a page of 100 records was most of a repeated page's time and garbage, and the
// collection pauses it caused showed in the p99.

/** Answers kept per route: up to ~100 KB of JSON each. */
const MAX_ANSWERS = 64;

export class AnswerCache {
  readonly #answers = new Map<string, string>();

  /** The answer's JSON: kept, or made by `serialize` and kept. */
  async json(key: string, serialize: () => Promise<string>): Promise<string> {
    const kept = this.#answers.get(key);
    if (kept !== undefined) {
      this.#answers.delete(key);
      this.#answers.set(key, kept);
      return kept;
    }
    const json = await serialize();
    this.#answers.set(key, json);
    if (this.#answers.size > MAX_ANSWERS) this.#answers.delete(this.#answers.keys().next().value as string);
    return json;
  }
}
