import * as assert from 'assert';
import { languageForPath } from '../../src/index/languages';
import { SourceParser } from '../../src/index/parser';
import { questionLines, sampleLines } from '../../src/index/questionLines';
import { seededRandom } from '../../src/index/seededRandom';

/** Files in three languages whose lines need names that another file declares (`elsewhere`). */
const FILES: Record<string, string> = {
  'src/service.ts': [
    "import { UserRepo } from './repo';",
    'export class Service {',
    '  constructor(private readonly repo: UserRepo) {}',
    '  async find(id: string) {',
    '    const user = await this.repo.findByEmail(id);',
    '    const next = { saveUser: user };',
    "    this.repo.note('resetUser', next);",
    '    return tidyRecord(user, id);',
    '  }',
    '}',
  ].join('\n'),
  'app/jobs.py': [
    'from app.repo import UserRepo',
    '',
    'def run(repo: UserRepo, user_id):',
    '    user = repo.find_by_email(user_id)',
    '    save_user = 1',
    '    return tidy_record(user)',
  ].join('\n'),
  'cmd/main.go': [
    'package main',
    '',
    'func run(r *repo.UserRepo, id string) error {',
    '\tuser := r.FindByEmail(id)',
    '\treturn TidyRecord(user)',
    '}',
  ].join('\n'),
};
const ELSEWHERE = new Set([
  ...['findByEmail', 'saveUser', 'resetUser', 'note', 'tidyRecord'],
  ...['find_by_email', 'save_user', 'tidy_record', 'FindByEmail', 'TidyRecord'],
]);

describe('question lines', () => {
  const parser = new SourceParser();
  after(() => parser.dispose());

  const linesOf = async (file: string, crossOnly = false) => {
    const text = FILES[file];
    const language = languageForPath(file)!;
    const tree = await parser.parse(file, language, text);
    return questionLines(file, text, tree, language.id, (name) => ELSEWHERE.has(name), crossOnly);
  };

  it('finds the lines that need a name declared in another file, and the names', async () => {
    const rows = (await linesOf('src/service.ts')).cross.map((l) => [l.row, l.novel]);
    // A key of an object literal is declared, a word in a string is no use: `note` is the one novel name of row 6.
    assert.deepStrictEqual(rows, [
      [4, ['findByEmail']],
      [6, ['note']],
      [7, ['tidyRecord']],
    ]);
    assert.deepStrictEqual(
      (await linesOf('app/jobs.py')).cross.map((l) => [l.row, l.novel]),
      [
        [3, ['find_by_email']],
        [5, ['tidy_record']],
      ],
    );
    assert.deepStrictEqual(
      (await linesOf('cmd/main.go')).cross.map((l) => [l.row, l.novel]),
      [
        [3, ['FindByEmail']],
        [4, ['TidyRecord']],
      ],
    );
  });

  it('finds the same cross lines when asked for no others', async () => {
    for (const file of Object.keys(FILES)) {
      const all = await linesOf(file);
      const cross = await linesOf(file, true);
      assert.deepStrictEqual(cross.cross, all.cross, file);
      assert.deepStrictEqual(cross.infile, [], file);
    }
  });

  it('in commit replay, also asks the first use of a name new to the file, though its import names it', async () => {
    const file = 'src/report.ts';
    const text = [
      "import { tidyRecord } from './tidy';",
      "import { UserRepo } from './repo';",
      'export function report(repo: UserRepo, id: string) {',
      '  const user = tidyRecord(repo, id);',
      '  const again = tidyRecord(user, id);',
      '  return repo.findByEmail(user);',
      '}',
    ].join('\n');
    const language = languageForPath(file)!;
    const tree = await parser.parse(file, language, text);
    const elsewhere = (name: string) => ELSEWHERE.has(name);
    const rows = (newToFile?: (name: string) => boolean) =>
      questionLines(file, text, tree, language.id, elsewhere, false, newToFile).cross.map((l) => [l.row, l.novel]);
    // The snapshot rule: the import mentions tidyRecord, so only findByEmail is novel.
    assert.deepStrictEqual(rows(), [[5, ['findByEmail']]]);
    // tidyRecord is new to the file: its first use (row 3) asks for it, its second use (row 4) does not.
    assert.deepStrictEqual(
      rows((name) => name === 'tidyRecord' || name === 'findByEmail'),
      [
        [3, ['tidyRecord']],
        [5, ['findByEmail']],
      ],
    );
    // A name the previous version already mentioned is asked only where the snapshot rule asks it.
    assert.deepStrictEqual(
      rows(() => false),
      [[5, ['findByEmail']]],
    );
  });
});

describe('sampleLines', () => {
  const line = (file: string, row: number) => ({ file, row, column: 0, novel: [] });
  // One large file holds 90 of the 100 lines, as a 3,000-line module does beside small helpers.
  const lines = [
    ...Array.from({ length: 90 }, (_, row) => line('big.ts', row)),
    ...Array.from({ length: 10 }, (_, i) => line(`small${i}.ts`, 0)),
  ];

  it('samples uniformly over lines, with no cap per file', () => {
    const picked = sampleLines(lines, 50, seededRandom(1));
    assert.strictEqual(picked.length, 50);
    const big = picked.filter((l) => l.file === 'big.ts').length;
    assert.ok(big > 30 && big < 50, `big.ts gave ${big} of 50 lines, about 45 expected`);
    assert.strictEqual(new Set(picked).size, 50);
  });

  it('is deterministic for a seed and caps a file only when asked', () => {
    const order = (seed: number) => sampleLines(lines, 20, seededRandom(seed)).map((l) => `${l.file}:${l.row}`);
    assert.deepStrictEqual(order(5), order(5));
    assert.notDeepStrictEqual(order(5), order(6));
    const capped = sampleLines(lines, 50, seededRandom(1), 3);
    assert.strictEqual(capped.length, 13);
    assert.strictEqual(capped.filter((l) => l.file === 'big.ts').length, 3);
  });
});
