/**
 * The settings' defaults live in src/defaults.ts; package.json contributes the same ones to VS Code's settings
 * editor. A setting added to one and not the other, or a default changed in one place only, fails here.
 */
import { strict as assert } from 'assert';
import { readFileSync } from 'fs';
import * as path from 'path';
import { DEFAULTS } from '../../src/defaults';

const PREFIX = 'repogate.';

describe('setting defaults', () => {
  const manifest = JSON.parse(readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8'));
  const properties: Record<string, { default: unknown }> = manifest.contributes.configuration.properties;

  it('package.json contributes exactly the settings defaults.ts names', () => {
    const contributed = Object.keys(properties)
      .map((key) => key.slice(PREFIX.length))
      .sort();
    assert.deepEqual(contributed, Object.keys(DEFAULTS).sort());
  });

  for (const [name, value] of Object.entries(DEFAULTS)) {
    it(`repogate.${name} defaults to ${JSON.stringify(value)} in both`, () => {
      assert.deepEqual(properties[`${PREFIX}${name}`]?.default, value);
    });
  }
});
