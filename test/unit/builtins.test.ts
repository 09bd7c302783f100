/** The hand-picked built-in type names retrieval skips, checked against the generated standard-library names. */
import { strict as assert } from 'assert';
import { BUILTIN_TYPES, BUILTIN_TYPES_BY_LANGUAGE, builtinNames } from '../../src/index/builtins';

describe('built-in names', () => {
  it("lists TypeScript types that TypeScript's own libraries and keywords declare", () => {
    const generated = builtinNames();
    const missing = BUILTIN_TYPES_BY_LANGUAGE.typescript.filter((name) => !generated.has(name));
    assert.deepEqual(missing, []);
  });

  it('skips each type name once, whatever language lists it', () => {
    const listed = Object.values(BUILTIN_TYPES_BY_LANGUAGE).flat();
    assert.equal(BUILTIN_TYPES.size, listed.length);
  });
});
