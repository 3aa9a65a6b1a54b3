// What a process knows of organizations' webhook endpoints, so that a merge-queue step finishing a PR
// spares the lookup (src/app/webhooks-out/endpoints.ts, used by src/app/queue/apply.ts on SQLite). An
// endpoint written while a lookup was under way must not leave that lookup's answer known.
import { describe, expect, it } from 'vitest';
import { EndpointPresence } from '../../src/app/webhooks-out/endpoints.ts';

describe('EndpointPresence', () => {
  it('keeps what a lookup found until an endpoint is written', () => {
    const p = new EndpointPresence();
    expect(p.of('repo')).toBeUndefined();
    p.learn('repo', false, p.generation);
    p.learn('other', true, p.generation);
    expect(p.of('repo')).toBe(false);
    expect(p.of('other')).toBe(true);
    p.changed();
    expect(p.of('repo')).toBeUndefined();
    expect(p.of('other')).toBeUndefined();
  });

  it('drops the answer of a lookup that started before an endpoint write', () => {
    const p = new EndpointPresence();
    const started = p.generation;
    // An endpoint is created while the lookup reads (before its commit, or after: either way).
    p.changed();
    p.learn('repo', false, started);
    expect(p.of('repo')).toBeUndefined();
    // A lookup started after the write is kept.
    p.learn('repo', true, p.generation);
    expect(p.of('repo')).toBe(true);
  });
});
