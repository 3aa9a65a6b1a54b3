export type { FailureAnatomy } from './anatomy.ts';
export { failureAnatomy, MAX_FRAMES } from './anatomy.ts';
export { failureFingerprint, failureSignature, fingerprintOf, fnv1a64 } from './fingerprint.ts';
export type { FailureGroup, FailureOccurrence } from './group.ts';
export { describeFailure, groupFailures, MAX_SUMMARY, NO_MESSAGE, summariseFailure } from './group.ts';
export { normaliseFailure, normaliseLine, stripAnsi } from './normalise.ts';
