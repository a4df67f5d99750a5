/** A file a generator produces; the CLI writes it. */
export interface GeneratedFile {
  /** Relative to the package root (`src/generated/validators.ts`), or to the docs site's folder. */
  path: string;
  contents: string;
}
