import { type Static, Type } from 'typebox';

/** `repo` of every v1 request: a repository on a git host. Matched case-insensitively. */
export const RepoRef = Type.Object(
  {
    host: Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[A-Za-z0-9.-]+(:[0-9]+)?$',
      description: 'git host, e.g. github.com',
    }),
    owner: Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[^\\s]+$',
      description: 'owner or group path',
    }),
    name: Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[^/\\s]+$',
      description: 'repository name',
    }),
  },
  { description: 'Repository reference' },
);
export type RepoRef = Static<typeof RepoRef>;

export const OrgUrlSlug = Type.String({
  minLength: 1,
  maxLength: 64,
  description: "slug of the token's organization",
});

/** `page_query`: page_size 1–100 (required, as upstream), page_token optional ("" = first page). */
export const PageQuery = Type.Object({
  page_size: Type.Integer({ minimum: 1, maximum: 100 }),
  page_token: Type.Optional(Type.String({ maxLength: 4096 })),
});

export const PageInfo = Type.Object({
  total_rows: Type.Integer({ minimum: 0 }),
  total_pages: Type.Integer({ minimum: 0 }),
  next_page_token: Type.String(),
  prev_page_token: Type.String(),
  last_page_token: Type.String(),
  page_index: Type.Integer({ minimum: 0, description: '0-based index of this page' }),
});

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      code: Type.String(),
      message: Type.String(),
      details: Type.Optional(
        Type.Array(Type.Object({ path: Type.String(), expected: Type.String(), message: Type.String() })),
      ),
    }),
  },
  { description: 'Every error answers with this envelope' },
);

/** The error responses every authenticated endpoint may give, for the OpenAPI document. */
export const authenticatedErrors = {
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  404: ErrorEnvelope,
  413: ErrorEnvelope,
  415: ErrorEnvelope,
  429: ErrorEnvelope,
  500: ErrorEnvelope,
} as const;
