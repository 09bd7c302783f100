#!/usr/bin/env node
// Writes src/index/builtins.json: every name declared by TypeScript's standard libraries
// (node_modules/typescript/lib/lib.*.d.ts — es5…esnext, dom, webworker, decorators, scripthost) and by
// @types/node, plus the JS/TS keywords. Benchmark task generation uses it so that a runtime API such as
// `Array.push` or `console.log` never counts as a repository identifier.
//
// The CLI runs without devDependencies, so the list is computed here once and committed. Regenerate after
// upgrading `typescript` or `@types/node` (from the repository root):
//
//     node tools/builtins/generate.mjs
//
// Names come from the TypeScript parser (no type checking): declaration names of every kind, including
// members of interfaces, classes, namespaces and enums, and identifier-shaped string keys such as the
// `"div"` of HTMLElementTagNameMap. Parameters and type parameters are local and left out.
import { createRequire } from 'module';
import * as fs from 'fs';
import * as path from 'path';
import { fileURLToPath } from 'url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(path.join(root, 'package.json'));
const ts = require('typescript');

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

function declarationFiles(dir, recursive, accept) {
  const found = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (recursive) found.push(...declarationFiles(full, recursive, accept));
    } else if (entry.name.endsWith('.d.ts') && accept(entry.name)) {
      found.push(full);
    }
  }
  return found;
}

const libDir = path.dirname(require.resolve('typescript/lib/lib.d.ts'));
const nodeTypesDir = path.dirname(require.resolve('@types/node/package.json'));
const files = [
  ...declarationFiles(libDir, false, (name) => name.startsWith('lib.')),
  ...declarationFiles(nodeTypesDir, true, () => true),
];

const names = new Set();

function addName(nameNode) {
  if (!nameNode) return;
  if (ts.isIdentifier(nameNode) || ts.isPrivateIdentifier(nameNode) || ts.isStringLiteral(nameNode)) {
    const text = nameNode.text.replace(/^#/, '');
    if (IDENTIFIER.test(text)) names.add(text);
  }
}

function visit(node) {
  if (
    ts.isInterfaceDeclaration(node) ||
    ts.isClassDeclaration(node) ||
    ts.isFunctionDeclaration(node) ||
    ts.isVariableDeclaration(node) ||
    ts.isTypeAliasDeclaration(node) ||
    ts.isModuleDeclaration(node) ||
    ts.isEnumDeclaration(node) ||
    ts.isEnumMember(node) ||
    ts.isMethodSignature(node) ||
    ts.isPropertySignature(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isPropertyDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node) ||
    ts.isExportSpecifier(node) ||
    ts.isImportEqualsDeclaration(node)
  ) {
    // Destructured variable names are binding patterns; the libraries declare none worth keeping.
    addName(node.name);
  }
  ts.forEachChild(node, visit);
}

for (const file of files) {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  visit(source);
}

for (let kind = ts.SyntaxKind.FirstKeyword; kind <= ts.SyntaxKind.LastKeyword; kind++) {
  const text = ts.tokenToString(kind);
  if (text && IDENTIFIER.test(text)) names.add(text);
}

// The compiler declares `globalThis` itself; no library file spells it out.
names.add('globalThis');

const sorted = [...names].sort();
const target = path.join(root, 'src/index/builtins.json');
fs.writeFileSync(target, JSON.stringify(sorted) + '\n');
console.log(`${sorted.length} names from ${files.length} files → ${path.relative(root, target)}`);
