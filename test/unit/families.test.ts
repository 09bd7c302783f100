/**
 * The model-family table against real vocabulary data (test/fixtures/vocab/*.json, each naming its source): every
 * family is detected from its own special tokens with the right ids, and its prompts are checked piece by piece
 * against goldens written out by hand from the families' documented layouts. The tiny model's prompt is also
 * tokenized by the real model through node-llama-cpp and compared with the layout it was trained on.
 */
import { strict as assert } from 'assert';
import { readFileSync } from 'fs';
import * as path from 'path';
import {
  FAMILIES,
  detectFamily,
  renderGateContinuation,
  renderGatePrefix,
  renderPrompt,
  specialTexts,
  type PromptInput,
  type PromptPiece,
  type ResolvedFamily,
  type SpecialRole,
  type VocabularyInfo,
} from '../../src/model/families';
import type { Snippet } from '../../src/retrieval/types';
import { renderCommentBlocks } from '../../src/retrieval/verbalize';
import { FIXTURES } from '../helpers/fixtures';
import { gatePrompt, generationPrompt, loadTinyModel, type TinyModel } from '../helpers/tinyModel';

interface VocabFixture {
  source: string;
  tokens: { id: number; text: string }[];
  metadata?: Record<string, unknown>;
}

function readFixture(id: string): VocabFixture {
  return JSON.parse(readFileSync(path.join(FIXTURES, 'vocab', `${id}.json`), 'utf8')) as VocabFixture;
}

function vocabOf(fixture: VocabFixture, extra: Record<string, number> = {}): VocabularyInfo {
  return {
    controlTokens: new Map([...fixture.tokens.map((t) => [t.text, t.id] as const), ...Object.entries(extra)]),
    metadata: new Map(Object.entries(fixture.metadata ?? {})),
  };
}

const resolved = (id: string): ResolvedFamily => detectFamily(vocabOf(readFixture(id)));

/** Special pieces as the resolved ids, text pieces as their text: what the golden sequences are written in. */
function golden(f: ResolvedFamily, pieces: readonly PromptPiece[]): (number | string)[] {
  return pieces.map((p) => {
    if ('text' in p) return p.text;
    const id = f.ids[p.special];
    assert.ok(id !== undefined, `${f.family.id} has no id for ${p.special}`);
    return id;
  });
}

function snippet(filePath: string, text: string): Snippet {
  const lines = text.split('\n').length;
  return { path: filePath, range: { start: 0, end: lines - 1 }, text, retriever: 'definition', why: 'test', score: 1 };
}

const L = 'const total = ';
const R = ';\nexport default total;\n';
const BEST = snippet('src/cart.ts', 'export function sum(xs: number[]): number');
const NEXT = snippet('src/util.ts', 'export const TAX = 0.2;');
const PLAIN: PromptInput = { path: 'src/app.ts', left: L, right: R, repoName: 'shop' };
const WITH_CC: PromptInput = { ...PLAIN, context: [BEST, NEXT] };

// renderCommentBlocks for src/app.ts, best snippet last (nearest the code), written out so that a change shows here.
const CC = [
  '\n\n// Here are some relevant code fragments from other files of the repo:',
  '// --------------------------------------------------',
  '// the below code fragment can be found in:',
  '// src/util.ts',
  '// --------------------------------------------------',
  '// export const TAX = 0.2;',
  '// --------------------------------------------------',
  '// the below code fragment can be found in:',
  '// src/cart.ts',
  '// --------------------------------------------------',
  '// export function sum(xs: number[]): number\n',
].join('\n');
// At the top of the prefix (CrossCodeEval's layout) without the blank lines that separate CC from <cc>.
const TOP = CC.replace(/^\n+/, '');

interface Case {
  ids: Partial<Record<SpecialRole, number>>;
  plain: (number | string)[];
  withCc: (number | string)[];
}

const CASES: Record<string, Case> = {
  'repogate-tiny': {
    ids: { eot: 0, fimPrefix: 1, fimSuffix: 2, fimMiddle: 3, eof: 4, cc: 5 },
    plain: [1, L, 2, R, 4, 3],
    withCc: [1, L, 2, R, 4, 5, CC, 3],
  },
  repoformer: {
    ids: { eot: 0, fimPrefix: 1, fimMiddle: 2, fimSuffix: 3, cc: 49152, eof: 49153 },
    plain: [1, L, 3, R, 49153, 2],
    withCc: [1, L, 3, R, 49153, 49152, CC, 2],
  },
  starcoder2: {
    ids: { eot: 0, fimPrefix: 1, fimMiddle: 2, fimSuffix: 3, repoName: 5, fileSep: 6 },
    plain: [1, L, 3, R, 2],
    // <repo_name>name<file_sep>path\ncode ... <file_sep><fim_prefix>path\nleft: no newline after name or code.
    withCc: [
      5,
      'shop',
      6,
      `src/util.ts\n${NEXT.text}`,
      6,
      `src/cart.ts\n${BEST.text}`,
      6,
      1,
      `src/app.ts\n${L}`,
      3,
      R,
      2,
    ],
  },
  starcoder: {
    ids: { eot: 0, fimPrefix: 1, fimMiddle: 2, fimSuffix: 3 },
    plain: [1, L, 3, R, 2],
    withCc: [1, TOP + L, 3, R, 2],
  },
  'qwen2.5-coder': {
    ids: { eot: 151643, fimPrefix: 151659, fimMiddle: 151660, fimSuffix: 151661, repoName: 151663, fileSep: 151664 },
    plain: [151659, L, 151661, R, 151660],
    withCc: [
      151663,
      'shop\n',
      151664,
      `src/util.ts\n${NEXT.text}\n`,
      151664,
      `src/cart.ts\n${BEST.text}\n`,
      151664,
      'src/app.ts\n',
      151659,
      L,
      151661,
      R,
      151660,
    ],
  },
  codegemma: {
    ids: { fimPrefix: 67, fimMiddle: 68, fimSuffix: 69, fileSep: 70, eot: 107 },
    plain: [67, L, 69, R, 68],
    withCc: [67, TOP + L, 69, R, 68],
  },
  'deepseek-coder': {
    ids: { eot: 32014, fimSuffix: 32015, fimPrefix: 32016, fimMiddle: 32017 },
    plain: [32016, L, 32015, R, 32017],
    withCc: [32016, TOP + L, 32015, R, 32017],
  },
  codellama: {
    ids: { fimPrefix: 32007, fimSuffix: 32008, fimMiddle: 32009, eot: 32010 },
    plain: [32007, L, 32008, R, 32009],
    withCc: [32007, TOP + L, 32008, R, 32009],
  },
  codestral: {
    ids: { eot: 2, fimPrefix: 11, fimMiddle: 12, fimSuffix: 13 },
    // Suffix first and no [MIDDLE]: generation continues the prefix (mistral-common encode_fim).
    plain: [13, R, 11, L],
    withCc: [13, R, 11, TOP + L],
  },
};

describe('model families', () => {
  it('has a fixture and goldens for every family of the table, each fixture naming its source', () => {
    assert.deepEqual(Object.keys(CASES).sort(), FAMILIES.map((f) => f.id).sort());
    for (const id of Object.keys(CASES)) assert.ok(readFixture(id).source.length > 40, `${id}.json names its source`);
    assert.equal(renderCommentBlocks([BEST, NEXT], 'src/app.ts'), CC);
  });

  it("shows a snippet's path within its project where the search kept to one, in comment blocks and pseudo-files", () => {
    const within = { ...BEST, path: 'repos/shop/src/cart.ts', shownPath: 'src/cart.ts' };
    assert.equal(renderCommentBlocks([within, NEXT], 'src/app.ts'), CC);
    for (const f of FAMILIES) {
      const text = (context: Snippet[]): string =>
        renderPrompt(resolved(f.id), { ...PLAIN, context })
          .map((p) => ('text' in p ? p.text : ''))
          .join('');
      assert.equal(text([within, NEXT]), text([BEST, NEXT]), f.id);
    }
  });

  for (const [id, c] of Object.entries(CASES)) {
    describe(id, () => {
      it('is detected from its vocabulary with the real token ids', () => {
        const f = resolved(id);
        assert.equal(f.family.id, id);
        assert.deepEqual(f.ids, c.ids);
        for (const role of Object.keys(c.ids) as SpecialRole[]) {
          assert.ok(f.stopIds.includes(c.ids[role]!), `${role} ends a completion`);
        }
        assert.equal(f.hasGate, f.family.context === 'gate');
      });

      it('renders the documented prompt without cross-file context', () => {
        const f = resolved(id);
        assert.deepEqual(golden(f, renderPrompt(f, PLAIN)), c.plain);
        assert.deepEqual(
          renderPrompt(f, { ...PLAIN, context: [] }),
          renderPrompt(f, PLAIN),
          'an empty context is no context',
        );
      });

      it('renders the documented prompt with cross-file context, best snippet nearest the code', () => {
        const f = resolved(id);
        assert.deepEqual(golden(f, renderPrompt(f, WITH_CC)), c.withCc);
      });
    });
  }

  it('finds StarCoder2 and Qwen2.5-Coder by their repository tokens, not by the FIM tokens they share', () => {
    const sc2 = readFixture('starcoder2');
    const withoutRepoTokens = {
      ...sc2,
      tokens: sc2.tokens.filter((t) => t.text !== '<file_sep>' && t.text !== '<repo_name>'),
    };
    assert.equal(detectFamily(vocabOf(withoutRepoTokens)).family.id, 'starcoder');
    const qwen = readFixture('qwen2.5-coder');
    const gemmaLike = {
      ...qwen,
      tokens: [...qwen.tokens.filter((t) => t.text !== '<|file_sep|>'), { id: 151700, text: '<|file_separator|>' }],
    };
    assert.equal(detectFamily(vocabOf(gemmaLike)).family.id, 'codegemma');
  });

  it('tells the tiny model from Repoformer by its repogate metadata', () => {
    const tiny = readFixture('repogate-tiny');
    assert.equal(detectFamily(vocabOf({ ...tiny, metadata: {} })).family.id, 'repoformer');
  });

  it('lists the stop tokens of a family, model end tokens included', () => {
    assert.deepEqual(resolved('repogate-tiny').stopIds, [0, 1, 2, 3, 4, 5]);
    assert.deepEqual(
      resolved('qwen2.5-coder').stopIds,
      [151643, 151645, 151659, 151660, 151661, 151662, 151663, 151664],
    );
    assert.deepEqual(resolved('codestral').stopIds, [2, 11, 12, 13]);
    assert.ok(resolved('deepseek-coder').stopIds.includes(32021), '<|EOT|>');
    assert.ok(resolved('codegemma').stopIds.includes(1), '<eos> from the metadata');
  });

  it('names the special texts to strip, longest first', () => {
    const texts = specialTexts(resolved('qwen2.5-coder'));
    assert.deepEqual(
      [...texts].sort(),
      [
        '<|endoftext|>',
        '<|file_sep|>',
        '<|fim_middle|>',
        '<|fim_pad|>',
        '<|fim_prefix|>',
        '<|fim_suffix|>',
        '<|im_end|>',
        '<|repo_name|>',
      ].sort(),
    );
    for (let i = 1; i < texts.length; i++) assert.ok(texts[i - 1].length >= texts[i].length);
    assert.ok(specialTexts(resolved('repoformer')).includes('<cc>'));
  });

  describe('gate layout', () => {
    for (const id of ['repogate-tiny', 'repoformer']) {
      it(`${id}: the gate prefix ends at <eof>; the continuation adds <cc>CC<fim_middle> or <fim_middle>`, () => {
        const f = resolved(id);
        const prefix = renderGatePrefix(f, WITH_CC);
        assert.deepEqual(prefix, [
          { special: 'fimPrefix' },
          { text: L },
          { special: 'fimSuffix' },
          { text: R },
          { special: 'eof' },
        ]);
        assert.deepEqual(renderGatePrefix(f, PLAIN), prefix, 'the prefix does not depend on the context');
        assert.deepEqual(renderGateContinuation(f, PLAIN), [{ special: 'fimMiddle' }]);
        const continuation = renderGateContinuation(f, WITH_CC);
        assert.deepEqual(continuation, [{ special: 'cc' }, { text: CC }, { special: 'fimMiddle' }]);
        assert.ok(CC.startsWith('\n\n'), 'Repoformer CC begins with a blank line');
        assert.deepEqual(renderPrompt(f, WITH_CC), [...prefix, ...continuation]);
      });
    }

    it('is refused for a family without a gate', () => {
      const f = resolved('starcoder');
      assert.throws(() => renderGatePrefix(f, PLAIN), /no <cc> gate/);
      assert.throws(() => renderGateContinuation(f, PLAIN), /no <cc> gate/);
    });

    it('honours user-configured names for the gate tokens', () => {
      const starcoder = readFixture('starcoder');
      const vocab = vocabOf(starcoder, { '<retrieve>': 49152, '<end_of_right>': 49153 });
      const plain = detectFamily(vocab);
      assert.equal(plain.family.id, 'starcoder');
      assert.equal(plain.hasGate, false);
      const gated = detectFamily(vocab, { gateTokens: ['<retrieve>'], eofTokens: ['<end_of_right>'] });
      assert.equal(gated.family.id, 'repoformer');
      assert.equal(gated.hasGate, true);
      assert.equal(gated.ids.cc, 49152);
      assert.equal(gated.ids.eof, 49153);
      assert.deepEqual(golden(gated, renderGatePrefix(gated, PLAIN)).slice(-1), [49153]);
      assert.ok(specialTexts(gated).includes('<retrieve>'));
    });

    it("accepts the Repoformer training code's names <cfc_info>/<end_rc>", () => {
      const f = detectFamily(vocabOf(readFixture('starcoder'), { '<cfc_info>': 49152, '<end_rc>': 49153 }));
      assert.equal(f.family.id, 'repoformer');
      assert.deepEqual([f.ids.cc, f.ids.eof], [49152, 49153]);
      assert.deepEqual([f.texts.cc, f.texts.eof], ['<cfc_info>', '<end_rc>']);
    });
  });

  it('throws naming the missing FIM tokens when no family fits', () => {
    const vocab: VocabularyInfo = {
      controlTokens: new Map([
        ['<s>', 1],
        ['</s>', 2],
      ]),
      metadata: new Map([['general.name', 'llama-2-7b']]),
    };
    assert.throws(
      () => detectFamily(vocab),
      (error: Error) => {
        assert.match(error.message, /fill-in-the-middle/);
        assert.match(error.message, /llama-2-7b/);
        for (const name of [
          '<fim_prefix>',
          '<|fim_prefix|>',
          '<｜fim▁begin｜>',
          '▁<PRE>',
          '[PREFIX]',
          '<|file_sep|>',
        ]) {
          assert.ok(error.message.includes(name), `names ${name}`);
        }
        return true;
      },
    );
  });

  it('keeps code that spells a control token as text', () => {
    const f = resolved('starcoder2');
    const left = 'const marker = "<fim_prefix><file_sep>";\n';
    const pieces = renderPrompt(f, { ...WITH_CC, left });
    const specials = pieces.filter((p): p is { special: SpecialRole } => 'special' in p).map((p) => p.special);
    assert.equal(specials.filter((s) => s === 'fimPrefix').length, 1);
    assert.equal(specials.filter((s) => s === 'fileSep').length, 3);
    assert.ok(pieces.some((p) => 'text' in p && p.text === `src/app.ts\n${left}`));
  });
});

/** GGUF metadata as node-llama-cpp nests it (general: {name}), flattened to the file's dotted keys. */
function flatten(value: Record<string, unknown>, prefix = '', out = new Map<string, unknown>()): Map<string, unknown> {
  for (const [key, v] of Object.entries(value)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) flatten(v as Record<string, unknown>, name, out);
    else out.set(name, v);
  }
  return out;
}

const CONTROL = 3;
const USER_DEFINED = 4;

describe('model families with the real tiny model (node-llama-cpp, CPU)', function () {
  this.timeout(120_000);
  let m: TinyModel;
  let vocab: VocabularyInfo;

  before(async () => {
    m = await loadTinyModel();
    const metadata = flatten(m.model.fileInfo.metadata as unknown as Record<string, unknown>);
    const tokens = metadata.get('tokenizer.ggml.tokens') as string[];
    const types = metadata.get('tokenizer.ggml.token_type') as number[];
    const control = new Map<string, number>();
    tokens.forEach((text, id) => {
      if (types[id] === CONTROL || types[id] === USER_DEFINED) control.set(text, id);
    });
    vocab = { controlTokens: control, metadata };
  });
  after(async () => {
    await m?.dispose();
  });

  it('matches the fixture read from the same GGUF', () => {
    const fixture = readFixture('repogate-tiny');
    assert.deepEqual(
      [...vocab.controlTokens],
      fixture.tokens.map((t) => [t.text, t.id]),
    );
    for (const [key, value] of Object.entries(fixture.metadata ?? {}))
      assert.equal(vocab.metadata?.get(key), value, key);
  });

  it('renders prompts that tokenize exactly as the layout the model was trained on', () => {
    const f = detectFamily(vocab);
    assert.equal(f.family.id, 'repogate-tiny');
    assert.deepEqual(f.ids, {
      eot: m.special.endoftext,
      fimPrefix: m.special.fimPrefix,
      fimSuffix: m.special.fimSuffix,
      fimMiddle: m.special.fimMiddle,
      eof: m.special.eof,
      cc: m.special.cc,
    });
    const tokenize = (pieces: readonly PromptPiece[]): number[] =>
      pieces.flatMap((p) => ('text' in p ? [...m.model.tokenize(p.text, false)] : [f.ids[p.special]!]));
    const left = 'import { sum } from "./cart";\n// "<fim_prefix>" in code is text\nconst total = ';
    const cases: PromptInput[] = [
      { path: 'src/app.ts', left, right: R },
      { path: 'src/app.ts', left, right: R, context: [BEST, NEXT] },
      { path: 'src/app.ts', left, right: '', context: [BEST] },
    ];
    for (const input of cases) {
      const cc = renderCommentBlocks([...(input.context ?? [])], input.path);
      assert.deepEqual(tokenize(renderPrompt(f, input)), generationPrompt(m, input.left, input.right, cc || undefined));
      assert.deepEqual(tokenize(renderGatePrefix(f, input)), gatePrompt(m, input.left, input.right));
    }
  });
});
