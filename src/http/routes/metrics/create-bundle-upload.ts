import { Type } from 'typebox';
import { createBundleUpload } from '../../../app/ingest/receive/bundle-url.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors, RepoRef } from '../../schemas/common.ts';
import type { Api, RouteDeps } from '../../types.ts';

const NullableString = Type.Optional(Type.Union([Type.String(), Type.Null()]));

/** POST /v1/metrics/createBundleUpload, as trunk-analytics-cli calls it: returns a URL to PUT the bundle to. */
export function registerCreateBundleUpload(app: Api, { ctx, urlSigner }: RouteDeps): void {
  app.post(
    '/metrics/createBundleUpload',
    {
      schema: {
        tags: ['test results'],
        summary:
          'Start a Trunk-style bundle upload: returns a signed URL (valid one hour) to PUT bundle.tar.zstd to',
        body: Type.Object({
          repo: RepoRef,
          orgUrlSlug: Type.String({ minLength: 1, maxLength: 64 }),
          clientVersion: Type.Optional(Type.String()),
          remoteUrls: Type.Optional(Type.Array(Type.String())),
          externalId: NullableString,
          testCollectionShortId: NullableString,
        }),
        response: {
          200: Type.Object({
            id: Type.String(),
            idV2: Type.String(),
            url: Type.String(),
            key: Type.String(),
          }),
          ...authenticatedErrors,
        },
      },
    },
    async (request) => createBundleUpload(ctx, callerOf(request), urlSigner, request.body),
  );
}
