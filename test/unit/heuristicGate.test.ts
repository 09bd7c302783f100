import { strict as assert } from 'assert';
import { decideGate, type GateSignals } from '../../src/gate/gate';
import {
  FITTED_HEURISTIC,
  HEURISTIC_FEATURES,
  gateNames,
  heuristicFeatures,
  heuristicProbability,
  importedNames,
} from '../../src/gate/heuristic';
import type { Snippet } from '../../src/retrieval/types';

const TEXT = [
  "import { UserRepo } from '../db/userRepo';",
  "import { normalizeEmail } from '../models/user';",
  '',
  'export async function register(repo: UserRepo, email: string) {',
  '  const normalized = normalizeEmail(email);',
  '  ',
  '  return saved;',
  '}',
].join('\n');

const snippet = (text: string, score: number): Snippet => ({
  path: 'src/db/userRepo.ts',
  range: { start: 0, end: 3 },
  text,
  retriever: 'definition',
  why: 'test',
  score,
});

describe('heuristic gate', () => {
  const features = heuristicFeatures({
    text: TEXT,
    cursor: { line: 5, character: 2 },
    trial: [snippet('export class UserRepo {\n  saveUser(user: User): Promise<User>\n}', 0.8)],
    draft: { text: 'const saved = await repo.saveUser(normalized);', confidences: [0.5, 0.25] },
    declaredElsewhere: new Set(),
  });

  it('reads the names a file imports, in several languages', () => {
    assert.deepEqual(
      [...importedNames(TEXT)].filter((n) => /^[A-Z]|normalize/.test(n)),
      ['UserRepo', 'normalizeEmail'],
    );
    assert.ok(importedNames('from app.models import User, Order\nimport os\n').has('Order'));
    assert.ok(importedNames("const { join } = require('path');").has('join'));
  });

  it('measures its signals at the cursor', () => {
    assert.deepEqual(Object.keys(features), [...HEURISTIC_FEATURES]);
    assert.equal(features.local_imports, 2);
    assert.ok(features.imported_near > 0);
    assert.equal(features.retrieval_top, 0.8);
    assert.equal(features.draft_uncertainty, 1 - 0.375);
    assert.ok(features.context_novel > 0, 'saveUser and User are new to the file');
    assert.ok(features.draft_novel > 0, 'saveUser is new to the file');
    assert.ok(features.right_novel > 0, 'saved appears after the cursor only');
  });

  it('reads the kinds of lines around the cursor: calls into other files come in runs', () => {
    const text = [
      'function load(db, cache, id) {',
      '  const rows = db.fetchRows(id);',
      '  ',
      '  return cache.remember(rows, id);',
      '}',
    ].join('\n');
    assert.deepEqual(
      gateNames(text, 2),
      ['const', 'fetchRows', 'return', 'remember', 'function', 'load'],
      'nearest the cursor first; db and rows are used twice',
    );
    assert.deepEqual(gateNames(text, 2, 2), ['const', 'fetchRows']);
    assert.deepEqual(
      gateNames('api.send(a);\n\napi.send(b);', 1),
      ['a', 'send', 'b'],
      'members are asked about whatever their count',
    );
    const at = (declaredElsewhere: Set<string>) =>
      heuristicFeatures({
        text,
        cursor: { line: 2, character: 2 },
        trial: [],
        draft: { text: '', confidences: [] },
        declaredElsewhere,
      });
    const calls = at(new Set(['fetchRows', 'remember']));
    assert.ok(
      calls.foreign_near > 0.5,
      `${calls.foreign_near}: both lines near the cursor call a method declared elsewhere`,
    );
    assert.ok(calls.foreign_member_near > 0.5 && calls.foreign_member_share > 0.5);
    assert.ok(
      calls.foreign_member_api > 0.5,
      `${calls.foreign_member_api}: the members on the nearest lines are another file's`,
    );
    const local = at(new Set());
    assert.deepEqual(
      [local.foreign_near, local.foreign_member_near, local.foreign_member_share, local.foreign_member_api],
      [0, 0, 0.5, 0],
      'names declared nowhere else',
    );
    const recurring = heuristicFeatures({
      text: 'const a = input.a;\nconst b = input.b;\n\nconst sum = a + b;\nreturn sum + a;\n',
      cursor: { line: 2, character: 0 },
      trial: [],
      draft: { text: '', confidences: [] },
      declaredElsewhere: new Set(['input']),
    });
    assert.ok(recurring.recurring_near > local.recurring_near, 'lines whose names all recur in the file');
  });

  it('turns them into a probability with the fitted weights, and decides against the fitted threshold', async () => {
    const p = heuristicProbability(features, FITTED_HEURISTIC);
    assert.ok(p > 0 && p < 1);
    const signals: GateSignals = { gateProbability: async () => undefined, heuristicFeatures: async () => features };
    const decision = await decideGate('token', signals, {
      multiline: false,
      thresholds: { line: 0.2, multiline: 0.15 },
      heuristic: FITTED_HEURISTIC,
    });
    assert.equal(decision.policy, 'heuristic', 'token falls back when no model has a gate token');
    assert.equal(decision.score, p);
    assert.equal(decision.fire, p > FITTED_HEURISTIC.threshold);
    const always = await decideGate('always', signals, {
      multiline: false,
      thresholds: { line: 0.2, multiline: 0.15 },
      heuristic: FITTED_HEURISTIC,
    });
    assert.deepEqual([always.fire, always.source], [true, 'fixed']);
  });

  it('has fitted weights for every feature', () => {
    for (const name of HEURISTIC_FEATURES) {
      assert.equal(typeof FITTED_HEURISTIC.weights[name], 'number', name);
      assert.ok(FITTED_HEURISTIC.scale[name] > 0, name);
    }
  });
});
