// The links of a repository's records (app/health/records.ts recordLinks) are made once per repository
// object and reused: what a reuse gives must be what making them anew gives, for the public URL and
// organization slug asked with, never those of an earlier call.
import { describe, expect, it } from 'vitest';
import { recordLinks } from '../../src/app/health/records.ts';
import type { Repository } from '../../src/app/repositories.ts';
import { repositoryHtmlUrl, testHtmlUrl } from '../../src/app/urls.ts';

const repository: Repository = {
  id: 'r1',
  org_id: 'o1',
  host: 'github.com',
  owner: 'acme/platform team',
  name: 'web app',
  host_key: 'github.com',
  owner_key: 'acme/platform team',
  name_key: 'web app',
  created_at: 0,
  owners_version: 0,
};

const expected = (publicUrl: string, orgSlug: string) => ({
  repository: { html_url: repositoryHtmlUrl(publicUrl, orgSlug, repository) },
  testUrlPrefix: testHtmlUrl(publicUrl, orgSlug, repository, ''),
});

describe('recordLinks', () => {
  it('gives the same links again for the same repository, URL and slug', () => {
    const first = recordLinks({ publicUrl: 'https://ml.example', orgSlug: 'acme', repository });
    expect(first).toEqual(expected('https://ml.example', 'acme'));
    expect(first.testUrlPrefix).toBe(
      'https://ml.example/acme/repos/github.com/acme/platform%20team/web%20app/tests/',
    );
    expect(recordLinks({ publicUrl: 'https://ml.example', orgSlug: 'acme', repository })).toEqual(first);
  });

  it('makes them anew for another public URL or organization slug', () => {
    recordLinks({ publicUrl: 'https://ml.example', orgSlug: 'acme', repository });
    expect(recordLinks({ publicUrl: 'https://other.example', orgSlug: 'acme', repository })).toEqual(
      expected('https://other.example', 'acme'),
    );
    expect(recordLinks({ publicUrl: 'https://other.example', orgSlug: 'beta', repository })).toEqual(
      expected('https://other.example', 'beta'),
    );
    expect(recordLinks({ publicUrl: 'https://ml.example', orgSlug: 'acme', repository })).toEqual(
      expected('https://ml.example', 'acme'),
    );
  });

  it('cannot be changed through a shared copy', () => {
    const links = recordLinks({ publicUrl: 'https://ml.example', orgSlug: 'acme', repository });
    expect(() => {
      (links.repository as { html_url: string }).html_url = 'https://evil.example';
    }).toThrow(TypeError);
    expect(recordLinks({ publicUrl: 'https://ml.example', orgSlug: 'acme', repository })).toEqual(
      expected('https://ml.example', 'acme'),
    );
  });
});
