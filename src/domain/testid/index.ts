export type { TestIdentityInput } from './test-case-id.ts';
export { baseTestCaseId, repoFullName, testCaseId } from './test-case-id.ts';
export { formatUuid, isUuidV5, parseUuid, URL_NAMESPACE, uuidV5 } from './uuid.ts';
