// Attribute value conversions used by the JUnit parser.
import { describe, expect, it } from 'vitest';
import { parseDurationMs, parseLine, parseTimestampMs, truncate } from '../../src/domain/junit/values.ts';

describe('parseDurationMs', () => {
  it('reads seconds in the forms producers write', () => {
    expect(parseDurationMs('1.5')).toBe(1500);
    expect(parseDurationMs('0.')).toBe(0);
    expect(parseDurationMs('.25')).toBe(250);
    expect(parseDurationMs('3')).toBe(3000);
    expect(parseDurationMs(' 0.001 ')).toBe(1);
    expect(parseDurationMs('1,234.5')).toBe(1_234_500);
    expect(parseDurationMs('1e-3')).toBe(1);
    expect(parseDurationMs('2.902412')).toBe(2902.412);
  });

  it('returns null for missing, negative or non-numeric values', () => {
    for (const bad of [undefined, '', '-1', 'NaN', 'Infinity', '<<computed>>', '1,5', '1.2.3', '0x10']) {
      expect(parseDurationMs(bad), String(bad)).toBeNull();
    }
  });
});

describe('parseTimestampMs', () => {
  it('reads ISO 8601 with and without zone (no zone = UTC)', () => {
    expect(parseTimestampMs('2024-12-10T01:00:00.000')).toBe(Date.UTC(2024, 11, 10, 1));
    expect(parseTimestampMs('2024-12-10T01:00:00Z')).toBe(Date.UTC(2024, 11, 10, 1));
    expect(parseTimestampMs('2021-04-01T10:52:37.000-08:00')).toBe(Date.UTC(2021, 3, 1, 18, 52, 37));
    expect(parseTimestampMs('2021-04-01T10:52:37+0530')).toBe(Date.UTC(2021, 3, 1, 5, 22, 37));
    expect(parseTimestampMs('2020-10-12T18:46:11.226119')).toBe(Date.UTC(2020, 9, 12, 18, 46, 11, 226));
    expect(parseTimestampMs('2020-10-12 18:46')).toBe(Date.UTC(2020, 9, 12, 18, 46));
    expect(parseTimestampMs('2020-10-12')).toBe(Date.UTC(2020, 9, 12));
  });

  it('drops zero/default times and garbage', () => {
    for (const bad of [
      undefined,
      '',
      '0001-01-01T00:00:00Z',
      '1970-01-01T00:00:00Z',
      'yesterday',
      '2020-13-45',
      '2020-01-01T25:00:00',
    ]) {
      expect(parseTimestampMs(bad), String(bad)).toBeNull();
    }
  });
});

describe('parseLine and truncate', () => {
  it('accepts only positive integer lines', () => {
    expect(parseLine('44')).toBe(44);
    expect(parseLine('0')).toBeNull();
    expect(parseLine('-3')).toBeNull();
    expect(parseLine('4.5')).toBeNull();
    expect(parseLine(undefined)).toBeNull();
  });

  it('cuts to the limit without leaving half a surrogate pair', () => {
    expect(truncate('abcdef', 3)).toBe('abc');
    expect(truncate('abc', 3)).toBe('abc');
    expect(truncate('ab🚀', 3)).toBe('ab');
    expect(truncate('a🚀', 3)).toBe('a🚀');
  });
});
