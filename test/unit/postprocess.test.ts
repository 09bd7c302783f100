import { strict as assert } from 'assert';
import { firstLineReady, postprocess, type PostprocessContext } from '../../src/engine/postprocess';

const SPECIAL = [
  '<fim_prefix>',
  '<fim_suffix>',
  '<fim_middle>',
  '<|endoftext|>',
  '<|file_sep|>',
  '<file_sep>',
  '<eof>',
  '<|EOT|>',
];

function context(over: Partial<PostprocessContext>): PostprocessContext {
  return { mode: 'line', maxLines: 8, linePrefix: '', lineSuffix: '', nextLines: [], specialTokens: SPECIAL, ...over };
}

interface Golden {
  name: string;
  raw: string;
  ctx: Partial<PostprocessContext>;
  expected: string;
}

const GOLDEN: Golden[] = [
  // 1. special tokens and line breaks
  {
    name: 'cuts at <|endoftext|> and drops everything after it',
    raw: 'items.length;<|endoftext|>\nconsole.log(total);',
    ctx: { linePrefix: '  const total = ' },
    expected: 'items.length;',
  },
  {
    name: 'cuts at the earliest special token, here a <|file_sep|> that starts another file',
    raw: '\n  return user.name;\n}\n<|file_sep|>src/other.ts\nexport const x = 1;<|endoftext|>',
    ctx: { mode: 'multiline', linePrefix: 'function nameOf(user: User): string {' },
    expected: '\n  return user.name;\n}',
  },
  {
    name: 'a completion that starts with a special token is empty',
    raw: '<eof>return x',
    ctx: { linePrefix: '    ' },
    expected: '',
  },
  {
    name: 'CRLF is a line break: line mode leaves no \\r behind',
    raw: 'user.id)\r\n  .filter(Boolean)',
    ctx: { linePrefix: '  .map((user) => ' },
    expected: 'user.id)',
  },
  {
    name: 'CRLF is a line break in the completion and in the next lines',
    raw: '\r\n  return a + b;\r\n}\r\n',
    ctx: { mode: 'multiline', linePrefix: 'function add(a: number, b: number): number {', nextLines: ['}\r', '\r'] },
    expected: '\n  return a + b;',
  },

  // 2. line mode
  {
    name: 'line mode keeps only the rest of the current line (Python)',
    raw: 'x * x for x in values)\n\ndef mean(values):\n    return sum(values) / len(values)',
    ctx: { linePrefix: '    return sum(' },
    expected: 'x * x for x in values)',
  },
  {
    name: 'line mode: a completion that only starts the next line is empty',
    raw: '\n    return 1',
    ctx: { linePrefix: 'def one():' },
    expected: '',
  },

  // 3. multi-line scope
  {
    name: 'multiline stops at maxLines',
    raw: '\n  2,\n  3,\n  5,\n  7,\n];',
    ctx: { mode: 'multiline', maxLines: 3, linePrefix: 'const primes = [' },
    expected: '\n  2,\n  3,',
  },
  {
    name: 'multiline keeps the closing brackets of what the cursor line opened, stops at the function end',
    raw: '{\n    where: { id },\n  });\n  return user;\n}\n\nexport async function remove(id: string) {',
    ctx: { mode: 'multiline', linePrefix: '  const user = await db.users.findOne(' },
    expected: '{\n    where: { id },\n  });\n  return user;',
  },
  {
    name: 'multiline stops before a line that closes a bracket opened above, even at the same indentation',
    raw: "host: 'localhost',\n    timeout: 30 });\n  server.listen();",
    ctx: { mode: 'multiline', linePrefix: '    ', nextLines: ['  });'] },
    expected: "host: 'localhost',",
  },
  {
    name: 'multiline stops at a line indented less than the cursor line (Python), blank lines aside',
    raw: '\n        if item.price > 0:\n            total += item.price\n    return total\n\n\ndef tax(total):\n    return total * 0.2',
    ctx: { mode: 'multiline', linePrefix: '    for item in items:' },
    expected: '\n        if item.price > 0:\n            total += item.price\n    return total',
  },
  {
    name: 'multiline ignores brackets inside string literals',
    raw: 'console.log("done)", `${n})`);\n  return total;\n}',
    ctx: { mode: 'multiline', linePrefix: '  ' },
    expected: 'console.log("done)", `${n})`);\n  return total;',
  },
  {
    name: 'multiline ignores brackets after a line comment',
    raw: 'count++; // } not the end yet\n  # ) neither\n  return count;\n}',
    ctx: { mode: 'multiline', linePrefix: '  ' },
    expected: 'count++; // } not the end yet\n  # ) neither\n  return count;',
  },
  {
    name: 'multiline: a first line that closes an enclosing scope leaves nothing',
    raw: '}\n\nexport function next() {',
    ctx: { mode: 'multiline', linePrefix: '' },
    expected: '',
  },

  // 4. repetition of the document
  {
    name: 'multiline cuts where the completion repeats the next lines',
    raw: '\n  return Math.PI * r * r;\n}\n\nfunction perimeter(r: number): number {',
    ctx: {
      mode: 'multiline',
      linePrefix: 'function area(r: number): number {',
      nextLines: ['}', '', 'function perimeter(r: number): number {'],
    },
    expected: '\n  return Math.PI * r * r;',
  },
  {
    name: 'multiline: a nested closing brace is not the enclosing one below the cursor',
    raw: '\n    if (x > 0) {\n      sum += x;\n    }\n  }',
    ctx: { mode: 'multiline', linePrefix: '  for (const x of xs) {', nextLines: ['  }', '  return sum;', '}'] },
    expected: '\n    if (x > 0) {\n      sum += x;\n    }',
  },
  {
    name: 'multiline skips blank next lines to find the line repeated',
    raw: 'const result = compute(input);\n\n  return result;\n}',
    ctx: { mode: 'multiline', linePrefix: '  ', nextLines: ['', '  return result;', '}'] },
    expected: 'const result = compute(input);',
  },
  {
    name: 'line mode: a line equal to the next line is dropped',
    raw: 'return self._cache[key]',
    ctx: { linePrefix: '        ', nextLines: ['        return self._cache[key]', ''] },
    expected: '',
  },
  {
    name: 'line mode removes a re-emitted ")" already right of the cursor',
    raw: 'userId)',
    ctx: { linePrefix: '  const user = await repo.findById(', lineSuffix: ')' },
    expected: 'userId',
  },
  {
    name: 'line mode removes a re-emitted ");"',
    raw: '`saved ${count} rows`);',
    ctx: { linePrefix: '    console.log(', lineSuffix: ');' },
    expected: '`saved ${count} rows`',
  },
  {
    name: 'line mode keeps a ")" that closes the completion\'s own bracket',
    raw: 'values.map(square)',
    ctx: { linePrefix: '  return sum(', lineSuffix: ')' },
    expected: 'values.map(square)',
  },
  {
    name: 'line mode removes only the duplicated one of two ")"',
    raw: 'values.map(square))',
    ctx: { linePrefix: '  return sum(', lineSuffix: ')' },
    expected: 'values.map(square)',
  },
  {
    name: 'a completion equal to the line suffix is empty',
    raw: ');',
    ctx: { linePrefix: '  save(', lineSuffix: ');' },
    expected: '',
  },

  // 5. mid-line before closing brackets and punctuation
  {
    name: 'mid-line before "]" (Python list comprehension)',
    raw: 'user.name for user in users]',
    ctx: { linePrefix: '    names = [', lineSuffix: ']' },
    expected: 'user.name for user in users',
  },
  {
    name: 'mid-line before "}" keeps the space in front of it',
    raw: 'x: 0, y: 0 }',
    ctx: { linePrefix: 'const origin = { ', lineSuffix: '}' },
    expected: 'x: 0, y: 0 ',
  },
  {
    name: 'mid-line before ";" drops the re-emitted semicolon',
    raw: 'retries + 1;',
    ctx: { linePrefix: '  const next = ', lineSuffix: ';' },
    expected: 'retries + 1',
  },
  {
    name: 'multiline: a re-emitted "}" at the end is dropped, the line break before the suffix stays',
    raw: '\n  cache.clear();\n}',
    ctx: { mode: 'multiline', linePrefix: 'export function reset(): void {', lineSuffix: '}' },
    expected: '\n  cache.clear();\n',
  },

  // 6. whitespace
  {
    name: 'trailing whitespace and blank lines are removed',
    raw: '\n  return a + b;  \n\n  ',
    ctx: { mode: 'multiline', linePrefix: 'function add(a, b) {' },
    expected: '\n  return a + b;',
  },
  {
    name: 'a whitespace-only completion is empty',
    raw: '   \n\t\n',
    ctx: { mode: 'multiline', linePrefix: '  ' },
    expected: '',
  },
  {
    name: 'a completion that only repeats the last token of the prefix is kept',
    raw: 'total',
    ctx: { linePrefix: '  total = total' },
    expected: 'total',
  },

  // 7. leading whitespace
  {
    name: 'mid-line leading space is kept',
    raw: ' * quantity;',
    ctx: { linePrefix: '  const total = price' },
    expected: ' * quantity;',
  },
  {
    name: "at an indentation-only prefix the model's extra indentation is left to VS Code",
    raw: '    return cached;',
    ctx: { linePrefix: '  ' },
    expected: '    return cached;',
  },
];

describe('postprocess', () => {
  for (const golden of GOLDEN) {
    it(golden.name, () => {
      assert.equal(postprocess(golden.raw, context(golden.ctx)), golden.expected);
    });
  }
});

describe('firstLineReady', () => {
  const line = context({ linePrefix: '  const total = ' });
  const multi = context({ mode: 'multiline', linePrefix: 'function add(a: number, b: number): number {' });

  it('is false while the first line is still growing', () => {
    assert.equal(firstLineReady('items.reduce((sum, item) => ', line), false);
  });
  it('is true once a line break ends the first line', () => {
    assert.equal(firstLineReady('items.length;\n', line), true);
    assert.equal(firstLineReady('items.length;\r\n', line), true);
  });
  it('is true when a special token ended the generation', () => {
    assert.equal(firstLineReady('items.length;<|endoftext|>', line), true);
  });
  it('is false for a special token not yet complete', () => {
    assert.equal(firstLineReady('items.length;<|endof', line), false);
  });
  it('in line mode an empty first line is final too', () => {
    assert.equal(firstLineReady('\n', line), true);
  });
  it('in multiline mode waits for the first non-blank line after a leading line break', () => {
    assert.equal(firstLineReady('\n', multi), false);
    assert.equal(firstLineReady('\n  return a +', multi), false);
    assert.equal(firstLineReady('\n  return a + b;\n', multi), true);
  });
});
