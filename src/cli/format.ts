import type { TokenListing } from '../app/tokens.ts';

function when(ms: number | null): string {
  return ms === null ? '-' : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A plain-text table of tokens for `mainline token list`. */
export function formatTokenTable(rows: readonly TokenListing[]): string {
  if (rows.length === 0) return 'no tokens';
  const header = ['ID', 'ORG', 'NAME', 'PREFIX', 'CREATED', 'LAST USED', 'STATUS'];
  const lines = rows.map((r) => [
    r.id,
    r.orgSlug,
    r.name,
    `${r.prefix}…`,
    when(r.createdAt),
    when(r.lastUsedAt),
    r.revokedAt === null ? 'active' : `revoked ${when(r.revokedAt)}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  return [header, ...lines]
    .map((cols) =>
      cols
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
