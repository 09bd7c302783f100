/**
 * File counts and identifier file frequencies of a few search scopes (key prefixes, `RepoIndex.searchScope`), made
 * on a scope's first use and kept current as files are added and removed: a project's own statistics choose its BM25
 * terms and rank its outlines' members, as they would with the project indexed alone (issue 41, decisions R29).
 */
export interface ScopeFigures {
  files: number;
  frequency: Map<string, number>;
}

export class ScopeStats {
  /** The scopes last asked about, least recent first. */
  private readonly kept = new Map<string, ScopeFigures>();

  /** The scope asked about last: a request asks about one scope many times (a name at a time). */
  private latest: { scope: string; figures: ScopeFigures } | undefined;

  constructor(private readonly limit: number) {}

  /** `scope`'s figures; `count` makes them (from every indexed file under it) on its first use. */
  of(scope: string, count: () => ScopeFigures): ScopeFigures {
    if (this.latest?.scope === scope) return this.latest.figures;
    let figures = this.kept.get(scope);
    if (figures) {
      this.kept.delete(scope);
    } else {
      figures = count();
      if (this.kept.size >= this.limit) this.kept.delete(this.kept.keys().next().value!);
    }
    this.kept.set(scope, figures);
    this.latest = { scope, figures };
    return figures;
  }

  /** Forgets every scope's figures: they are made again on their next use. */
  clear(): void {
    this.kept.clear();
    this.latest = undefined;
  }

  /** A file under some kept scopes was added (`sign` 1) or removed (-1) with the identifiers it uses. */
  change(path: string, names: Iterable<string>, sign: 1 | -1): void {
    for (const [scope, figures] of this.kept) {
      if (!path.startsWith(scope)) continue;
      figures.files += sign;
      for (const name of names) {
        const count = (figures.frequency.get(name) ?? 0) + sign;
        if (count > 0) figures.frequency.set(name, count);
        else figures.frequency.delete(name);
      }
    }
  }
}
