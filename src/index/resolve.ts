/**
 * Import specifier → indexed files.
 *
 * The layout (projectLayout.ts) is read from configuration files once; resolution itself touches no disk and
 * probes the index through `hasFile`, so it follows the file set as it changes. One resolver a language family
 * (resolvers/); this module picks it.
 */
import type { HasFile, ProjectLayout } from './projectLayout';
import { resolveGo } from './resolvers/go';
import { resolveJava } from './resolvers/java';
import { resolvePython } from './resolvers/python';
import { resolveRust } from './resolvers/rust';
import { JS_EXTENSIONS, resolveScript, TS_EXTENSIONS } from './resolvers/script';
import type { LanguageId } from './types';

// The layout is built beside resolution; the index asks both of this module.
export { loadProjectLayout, type ProjectLayout } from './projectLayout';

/**
 * The indexed files `specifier` (as written in `fromFile`) refers to; empty when it is external or unknown.
 * `filesInDir` lists the workspace-relative paths of the indexed files directly in a directory.
 * `importedNames` (Python `from X import a, b`) lets submodules a and b resolve too.
 */
export function resolveImport(
  layout: ProjectLayout,
  hasFile: HasFile,
  filesInDir: (relDir: string) => string[],
  fromFile: string,
  specifier: string,
  language: LanguageId,
  importedNames?: readonly string[],
): string[] {
  switch (language) {
    case 'typescript':
    case 'tsx':
      return asList(resolveScript(layout, hasFile, fromFile, specifier, TS_EXTENSIONS));
    case 'javascript':
      return asList(resolveScript(layout, hasFile, fromFile, specifier, JS_EXTENSIONS));
    case 'python':
      return resolvePython(layout, hasFile, fromFile, specifier, importedNames ?? []);
    case 'go':
      return resolveGo(layout, filesInDir, specifier);
    case 'rust':
      return asList(resolveRust(layout, hasFile, fromFile, specifier));
    case 'java':
      return resolveJava(layout, hasFile, filesInDir, specifier);
    default:
      return [];
  }
}

function asList(file: string | undefined): string[] {
  return file === undefined ? [] : [file];
}
