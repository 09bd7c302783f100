import type { Node } from 'web-tree-sitter';
import type { LanguageSpec } from './languages';
import type { ImportBinding } from './types';

function unquote(text: string): string {
  return text.replace(/^['"`]|['"`]$/g, '');
}

function binding(specifier: string, pairs: [local: string, imported: string][], line: number): ImportBinding {
  return { specifier, names: pairs.map((p) => p[0]), imported: pairs.map((p) => p[1]), line };
}

/**
 * `import a, {b as c} from 'x'`, `export {d} from 'y'`, `export * from 'z'`, `export * as ns from 'u'`,
 * `require('w')`, `import('v')`.
 */
function scriptImports(root: Node): ImportBinding[] {
  const out: ImportBinding[] = [];
  for (const node of root.namedChildren) {
    if (!node) continue;
    const source = node.childForFieldName('source');
    if ((node.type === 'import_statement' || node.type === 'export_statement') && source) {
      const pairs: [string, string][] = [];
      for (const spec of node.descendantsOfType(['import_specifier', 'export_specifier'])) {
        const name = spec!.childForFieldName('name')?.text;
        if (name) pairs.push([spec!.childForFieldName('alias')?.text ?? name, name]);
      }
      const clause = node.namedChildren.find((c) => c?.type === 'import_clause');
      for (const child of clause?.namedChildren ?? []) {
        if (child?.type === 'identifier') pairs.push([child.text, 'default']);
        if (child?.type === 'namespace_import') pairs.push([child.namedChildren[0]?.text ?? '*', '*']);
      }
      // `export * as ns from 'x'` binds one name to the whole module, unlike `export * from 'x'`.
      const namespace = node.namedChildren.find((c) => c?.type === 'namespace_export')?.namedChildren[0]?.text;
      if (namespace) pairs.push([namespace, '*']);
      if (node.type === 'export_statement' && pairs.length === 0) pairs.push(['*', '*']);
      out.push(binding(unquote(source.text), pairs, node.startPosition.row));
    }
  }
  // CommonJS and dynamic imports can sit anywhere; they are rare enough to search for textually first.
  if (/\b(require|import)\s*\(/.test(root.text)) {
    for (const call of root.descendantsOfType('call_expression')) {
      const fn = call!.childForFieldName('function');
      const arg = call!.childForFieldName('arguments')?.namedChildren[0];
      if (!fn || !arg || arg.type !== 'string' || (fn.text !== 'require' && fn.type !== 'import')) continue;
      const declarator = call!.parent?.type === 'variable_declarator' ? call!.parent.childForFieldName('name') : null;
      const pairs: [string, string][] = [];
      if (declarator?.type === 'identifier') pairs.push([declarator.text, '*']);
      for (const p of declarator?.type === 'object_pattern' ? declarator.namedChildren : []) {
        if (p?.type === 'shorthand_property_identifier_pattern') pairs.push([p.text, p.text]);
      }
      out.push(binding(unquote(arg.text), pairs, call!.startPosition.row));
    }
  }
  return out;
}

function pythonImports(root: Node): ImportBinding[] {
  const out: ImportBinding[] = [];
  for (const node of root.descendantsOfType(['import_statement', 'import_from_statement'])) {
    const line = node!.startPosition.row;
    const names = node!.childrenForFieldName('name');
    if (node!.type === 'import_statement') {
      for (const n of names) {
        const dotted = n!.type === 'aliased_import' ? n!.childForFieldName('name')! : n!;
        const alias = n!.type === 'aliased_import' ? n!.childForFieldName('alias')!.text : dotted.text.split('.')[0];
        out.push(binding(dotted.text, [[alias, '*']], line));
      }
    } else {
      const module = node!.childForFieldName('module_name')?.text ?? '';
      const pairs: [string, string][] = names.map((n) =>
        n!.type === 'aliased_import'
          ? [n!.childForFieldName('alias')!.text, n!.childForFieldName('name')!.text]
          : [n!.text, n!.text],
      );
      out.push(binding(module, pairs.length ? pairs : [['*', '*']], line));
    }
  }
  return out;
}

function goImports(root: Node): ImportBinding[] {
  return root.descendantsOfType('import_spec').map((spec) => {
    const specifier = unquote(spec!.childForFieldName('path')!.text);
    const local = spec!.childForFieldName('name')?.text ?? goPackageName(specifier);
    return binding(specifier, [[local, '*']], spec!.startPosition.row);
  });
}

/**
 * The name an unaliased Go import binds, by the convention its path follows: the last element, less a major
 * version (`github.com/gofiber/fiber/v3` → fiber, `gopkg.in/yaml.v3` → yaml).
 */
function goPackageName(specifier: string): string {
  const parts = specifier.split('/');
  const last = parts.pop()!;
  if (/^v\d+$/.test(last) && parts.length > 1) return parts.pop()!.replace(/\.v\d+$/, '');
  return last.replace(/\.v\d+$/, '');
}

function rustImports(root: Node): ImportBinding[] {
  // `mod x;` binds x to the module file x.rs (or x/mod.rs) beside the declaring module: a namespace.
  const mods = root.namedChildren
    .filter((item) => item?.type === 'mod_item' && !item.childForFieldName('body'))
    .map((item) => {
      const name = item!.childForFieldName('name')!.text;
      return binding(`self::${name}`, [[name, '*']], item!.startPosition.row);
    });
  const uses = root.descendantsOfType('use_declaration').map((use) => {
    const text = use!.childForFieldName('argument')?.text ?? '';
    const brace = text.indexOf('{');
    const base = (brace >= 0 ? text.slice(0, brace) : text).replace(/::$/, '');
    const names =
      brace >= 0
        ? text
            .slice(brace + 1, text.lastIndexOf('}'))
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : [base.split('::').pop()!];
    const pairs = names.map((n): [string, string] => {
      const [imported, alias] = n.split(/\s+as\s+/);
      const leaf = imported.split('::').pop()!;
      return [alias ?? leaf, leaf];
    });
    return binding(brace >= 0 ? base : base.split('::').slice(0, -1).join('::') || base, pairs, use!.startPosition.row);
  });
  return [...mods, ...uses];
}

function javaImports(root: Node): ImportBinding[] {
  return root.descendantsOfType('import_declaration').map((imp) => {
    const text = imp!.text.replace(/^import\s+(static\s+)?/, '').replace(/[;\s]+$/, '');
    const leaf = text.split('.').pop()!;
    return binding(text, [[leaf, leaf]], imp!.startPosition.row);
  });
}

export function extractImports(spec: LanguageSpec, root: Node): ImportBinding[] {
  switch (spec.id) {
    case 'typescript':
    case 'tsx':
    case 'javascript':
      return scriptImports(root);
    case 'python':
      return pythonImports(root);
    case 'go':
      return goImports(root);
    case 'rust':
      return rustImports(root);
    case 'java':
      return javaImports(root);
    default:
      return [];
  }
}
