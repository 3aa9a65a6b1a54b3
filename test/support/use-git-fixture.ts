// The hooks every plain-git forge test registers: a fresh GitFixture (bare repository, forge, working
// clone) before each test of the enclosing file or describe block, removed after it.
import { afterEach, beforeEach } from 'vitest';
import { createFixture, type GitFixture } from './git-fixture.ts';

/** The fixture of the running test; its fields exist only inside tests and hooks. */
export function useGitFixture(): GitFixture {
  let current: GitFixture | undefined;
  const live = (): GitFixture => {
    if (current === undefined)
      throw new Error('useGitFixture: the fixture exists only inside tests and hooks');
    return current;
  };
  beforeEach(async () => {
    current = await createFixture();
  });
  afterEach(() => {
    const was = current;
    current = undefined;
    was?.cleanup();
  });
  return {
    get root() {
      return live().root;
    },
    get forge() {
      return live().forge;
    },
    get repo() {
      return live().repo;
    },
    get bare() {
      return live().bare;
    },
    get work() {
      return live().work;
    },
    cleanup: () => live().cleanup(),
  };
}
