import type { FastifyInstance } from 'fastify';

/** One registered route: the method and the URL template exactly as Fastify holds it (`:id`, `*`). */
export interface Route {
  readonly method: string;
  readonly url: string;
}

/** `METHOD url`, the key the route tables of the tests use. */
export const routeKey = (r: Route): string => `${r.method} ${r.url}`;

/**
 * Every route the application serves, read from Fastify's own route tree (`printRoutes`), so routes
 * hidden from the OpenAPI document (`hide: true`), registered before @fastify/swagger, or without a
 * schema are all listed. Needs no change to src/: buildApp creates the instance itself, so an
 * `onRoute` hook cannot be added in time, but the tree can be read after `ready()`.
 *
 * The default (radix-tree) print is used: each line is a path fragment under its parent, and a line
 * with a method list is a route. (`commonPrefix: false` drops static parts after a parameter:
 * `/:org/repos/*` prints as `/:org` → `*`.)
 *
 * HEAD routes that Fastify adds for every GET are left out; a HEAD route of its own would be listed.
 */
export function listRoutes(app: FastifyInstance): Route[] {
  const text = app.printRoutes();
  const stack: string[] = [];
  const found = new Map<string, Set<string>>();
  for (const line of text.split('\n')) {
    // "│   ├── static/index.html (GET, HEAD)": 4 characters of indentation per level.
    const match = line.match(/^((?:│ {3}| {4})*)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/u);
    if (match === null) continue;
    const depth = (match[1] ?? '').length / 4;
    stack.length = depth;
    stack.push(match[2] ?? '');
    if (match[3] === undefined) continue;
    const url = stack.join('');
    const methods = found.get(url) ?? new Set<string>();
    for (const m of match[3].split(',')) methods.add(m.trim());
    found.set(url, methods);
  }
  const routes: Route[] = [];
  for (const [url, methods] of found) {
    for (const method of methods) {
      if (method === 'HEAD' && methods.has('GET')) continue;
      routes.push({ method, url });
    }
  }
  return routes.sort((a, b) => routeKey(a).localeCompare(routeKey(b)));
}

/** A JSON Schema node as @fastify/swagger writes it into the OpenAPI document. */
export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  const?: unknown;
  enum?: unknown[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  maxItems?: number;
};

/** An operation of the OpenAPI document, with the route template in Fastify's spelling. */
export interface Operation extends Route {
  /** The application/json request body schema, when the route declares one. */
  readonly body: JsonSchema | undefined;
  /** The querystring parameters, by name. */
  readonly query: Record<string, JsonSchema>;
  /** The status codes the operation documents. */
  readonly responses: readonly number[];
}

/** The operations of `app.swagger()` (every route with a schema that is not hidden). */
export function openApiOperations(app: FastifyInstance): Operation[] {
  const doc = app.swagger() as {
    paths?: Record<
      string,
      Record<
        string,
        {
          requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
          parameters?: { in: string; name: string; schema?: JsonSchema }[];
          responses?: Record<string, unknown>;
        }
      >
    >;
  };
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(methods)) {
      const query: Record<string, JsonSchema> = {};
      for (const p of op.parameters ?? []) if (p.in === 'query') query[p.name] = p.schema ?? {};
      ops.push({
        method: method.toUpperCase(),
        url: path.replace(/\{([^}]+)\}/g, ':$1'),
        body: op.requestBody?.content?.['application/json']?.schema,
        query,
        responses: Object.keys(op.responses ?? {})
          .map(Number)
          .filter((n) => Number.isInteger(n)),
      });
    }
  }
  return ops.sort((a, b) => routeKey(a).localeCompare(routeKey(b)));
}
