#!/usr/bin/env node
// Builds Repoformer training / evaluation samples from the corpus with this project's own index, task maker,
// retriever and CC renderer (the compiled TypeScript in out/src; run `npx tsc -p .` first).
//
//   node make_samples.js CORPUS --split train   --out work/train.jsonl [--tasks-per-kind 40] [--spans-per-file 3]
//   node make_samples.js CORPUS --split heldout --out work/eval.jsonl  [--tasks-per-kind 60] [--budget 800]
//   node make_samples.js CORPUS --split train --tasks-per-kind 0 --spans-per-file 0 --ident-spans-per-file 4 \
//     --out work/train-ident.jsonl                                  (copy lessons, research/README.md)
//
// One JSON object a line: {pkg, path, kind: cross|infile|span|ident, left, right, middle, cc, oracle_cc, novel, label}.
// left/right/middle are the prompt around the cursor (right begins with the newline after the middle for
// line tasks); cc is the retrieved cross-file context rendered exactly as at runtime (renderCommentBlocks).
'use strict';
const fs = require('fs');
const path = require('path');
const OUT = path.resolve(__dirname, '../../out/src');
const { RepoIndex } = require(`${OUT}/index/repoIndex.js`);
const { buildIndex } = require(`${OUT}/index/workspace.js`);
const { retrieve } = require(`${OUT}/retrieval/retrieve.js`);
const { renderCommentBlocks } = require(`${OUT}/retrieval/verbalize.js`);
const { makeTasks, isTaskSourcePath } = require(`${OUT}/bench/makeTasks.js`);
const { SourceParser } = require(`${OUT}/index/parser.js`);

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? dflt : args[i + 1];
};
const corpus = path.resolve(args[0]);
const split = opt('split', 'train');
const outFile = opt('out');
const perKind = Number(opt('tasks-per-kind', split === 'train' ? 40 : 60));
const spansPerFile = Number(opt('spans-per-file', split === 'train' ? 3 : 0));
const identSpansPerFile = Number(opt('ident-spans-per-file', 0));
const budget = Number(opt('budget', 800));
const onlyPkg = opt('package');
const LEFT_CHARS = 1200,
  RIGHT_CHARS = 400;

function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const KEYWORDS = new Set(
  'break case catch class const continue debugger default delete do else export extends false finally for function if import in instanceof new null return super switch this throw true try typeof var void while with yield let static enum await implements package protected interface private public async of get set from as type undefined any string number boolean unknown never object readonly keyof declare module namespace require exports'.split(
    ' ',
  ),
);
const idents = (s) => new Set((s.match(/[A-Za-z_$][\w$]*/g) || []).filter((w) => !KEYWORDS.has(w) && w.length > 1));

/** Left context cut to whole lines within LEFT_CHARS; right context to RIGHT_CHARS. */
function cutLeft(s) {
  if (s.length <= LEFT_CHARS) return s;
  const t = s.slice(s.length - LEFT_CHARS);
  const nl = t.indexOf('\n');
  return nl >= 0 ? t.slice(nl + 1) : t;
}
function cutRight(s) {
  return s.length <= RIGHT_CHARS ? s : s.slice(0, RIGHT_CHARS);
}

function cursorAt(text, offset) {
  const before = text.slice(0, offset);
  const line = before.split('\n').length - 1;
  return { line, character: offset - (before.lastIndexOf('\n') + 1) };
}

function oracleSnippets(index, file, names) {
  const snippets = [];
  const seen = new Set();
  for (const name of names) {
    const ref = index.symbols(name).find((r) => r.path !== file);
    if (!ref) continue;
    const facts = index.facts(ref.path);
    if (!facts) continue;
    const r = ref.symbol.range;
    const chunk = facts.chunks
      .filter((c) => c.range.start <= r.start && c.range.end >= Math.min(r.end, r.start + 1))
      .sort((a, b) => a.range.end - a.range.start - (b.range.end - b.range.start))[0];
    const text = chunk ? chunk.text : ref.symbol.signature;
    const range = chunk ? chunk.range : r;
    const key = `${ref.path}#${range.start}`;
    if (seen.has(key)) continue;
    seen.add(key);
    snippets.push({
      path: ref.path,
      range,
      text: text.length > budget / 2 ? text.slice(0, budget / 2) : text,
      retriever: 'definition',
      why: `oracle ${name}`,
      score: 1,
    });
  }
  return snippets;
}

async function main() {
  const manifest = JSON.parse(fs.readFileSync(path.join(corpus, 'manifest.json'), 'utf8'));
  const pkgs = manifest.packages.filter((p) => p.split === split && (!onlyPkg || p.name === onlyPkg));
  const out = fs.openSync(outFile, 'w');
  const parser = new SourceParser();
  const counts = { cross: 0, infile: 0, span: 0, ident: 0, positive: 0 };
  const t0 = Date.now();
  let retrieveMs = 0;
  for (const [pi, pkg] of pkgs.entries()) {
    const root = path.join(corpus, pkg.folder);
    const index = new RepoIndex(root);
    try {
      await buildIndex(index, { root, excludeGlobs: ['**/node_modules/**'], parser });
    } catch (e) {
      console.error(`skip ${pkg.name}: ${e.message}`);
      continue;
    }
    const next = rng(1000 + pi);
    const write = (s) => {
      fs.writeSync(out, JSON.stringify(s) + '\n');
      counts[s.kind]++;
      if (s.label) counts.positive++;
    };
    const sample = (file, text, offset, middleEnd, kind, novel) => {
      const left = text.slice(0, offset);
      const middle = text.slice(offset, middleEnd);
      const right = text.slice(middleEnd);
      const t = performance.now();
      const { snippets } = retrieve(index, {
        path: file,
        text: left + right,
        cursor: cursorAt(left, left.length),
        budget,
      });
      retrieveMs += performance.now() - t;
      const cc = renderCommentBlocks(snippets, file);
      let label;
      if (kind === 'cross') label = 1;
      else if (kind === 'infile') label = 0;
      else {
        // Copy lessons name their novel identifier (the middle may hold only its tail).
        if (kind !== 'ident') {
          const ctx = idents(left + right);
          novel = [...idents(middle)].filter((w) => !ctx.has(w));
        }
        const inCC = novel.filter((w) => cc.includes(w));
        label = inCC.length > 0 ? 1 : 0;
      }
      const s = {
        pkg: pkg.name,
        path: file,
        kind,
        left: cutLeft(left),
        right: cutRight(right),
        middle,
        cc,
        novel,
        label,
      };
      s.oracle_cc =
        kind === 'infile'
          ? ''
          : renderCommentBlocks(
              oracleSnippets(
                index,
                file,
                novel.filter((w) => index.symbols(w).some((r) => r.path !== file)),
              ),
              file,
            );
      write(s);
    };
    let tasks = [];
    try {
      tasks = await makeTasks(index, root, { perKind, seed: 42 + pi, parser });
    } catch (e) {
      console.error(`tasks ${pkg.name}: ${e.message}`);
    }
    for (const task of tasks) {
      const file = task.metadata.file;
      const prompt = task.prompt;
      const text =
        prompt + task.groundtruth + (task.right_context || task.right_context === '' ? '\n' + task.right_context : '');
      sample(
        file,
        text,
        prompt.length,
        prompt.length + task.groundtruth.length,
        task.metadata.kind,
        task.metadata.novel_identifiers,
      );
    }
    if (spansPerFile > 0) {
      for (const file of [...index.files.keys()].filter(isTaskSourcePath).sort()) {
        let text;
        try {
          text = fs.readFileSync(path.join(root, file), 'utf8');
        } catch {
          continue;
        }
        const lines = text.split('\n');
        if (lines.length < 8) continue;
        for (let k = 0; k < spansPerFile; k++) {
          const row = 2 + Math.floor(next() * (lines.length - 4));
          const col = lines[row].search(/\S/);
          if (col < 0) continue;
          let start = 0;
          for (let r = 0; r < row; r++) start += lines[r].length + 1;
          start += col;
          const nLines = next() < 0.6 ? 1 : 1 + Math.floor(next() * 3);
          let end = start;
          for (let r = row; r < Math.min(lines.length, row + nLines); r++)
            end = (r === row ? start - col : end + 1) + lines[r].length;
          if (nLines === 1 && next() < 0.3) {
            // a cursor inside the line
            const mid = start + Math.floor(next() * (end - start));
            start = mid;
          }
          if (end - start < 3 || end - start > 240) continue;
          sample(file, text, start, end, 'span', []);
        }
      }
    }
    if (identSpansPerFile > 0) {
      // Copy lessons: the cursor at or inside a use of a name declared only in another file and absent from the
      // left context, the middle the rest of that line; the name is in the oracle CC (and often the retrieved).
      for (const file of [...index.files.keys()].filter(isTaskSourcePath).sort()) {
        let text;
        try {
          text = fs.readFileSync(path.join(root, file), 'utf8');
        } catch {
          continue;
        }
        const declaredHere = new Set((index.facts(file)?.symbols ?? []).map((x) => x.name));
        const uses = [];
        for (const m of text.matchAll(/[A-Za-z_$][\w$]*/g)) {
          const name = m[0];
          if (name.length < 3 || KEYWORDS.has(name) || declaredHere.has(name)) continue;
          if (!index.symbols(name).some((r) => r.path !== file)) continue;
          const start = m.index;
          const lineEnd = text.indexOf('\n', start);
          const end = lineEnd < 0 ? text.length : lineEnd;
          // cutLeft reads only the last LEFT_CHARS (+1 to see whether it cuts): no copy of the whole prefix per name.
          if (end - start > 160 || cutLeft(text.slice(Math.max(0, start - LEFT_CHARS - 1), start)).includes(name))
            continue;
          uses.push([start, end]);
        }
        for (let k = 0; k < identSpansPerFile && uses.length; k++) {
          const [start, end] = uses.splice(Math.floor(next() * uses.length), 1)[0];
          // Half the cursors inside the name: its first characters typed, the rest to copy from the CC.
          const name = /^[\w$]+/.exec(text.slice(start))[0];
          const typed = next() < 0.5 ? 1 + Math.floor(next() * (name.length - 2)) : 0;
          sample(file, text, start + typed, end, 'ident', [name]);
        }
      }
    }
    index.dispose?.();
    if (pi % 20 === 0 || pi === pkgs.length - 1) {
      console.error(
        `${pi + 1}/${pkgs.length} ${pkg.name} ${JSON.stringify(counts)} ${((Date.now() - t0) / 1000).toFixed(0)}s (retrieve ${(retrieveMs / 1000).toFixed(0)}s)`,
      );
    }
  }
  parser.dispose();
  fs.closeSync(out);
  console.error(`done ${JSON.stringify(counts)} in ${((Date.now() - t0) / 1000).toFixed(0)}s`);
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
