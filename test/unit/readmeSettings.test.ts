import { strict as assert } from 'assert';
import { readFileSync } from 'fs';
import * as path from 'path';

const ROOT = path.resolve(__dirname, '../../..');

interface Row {
  key: string;
  defaultText: string;
  meaning: string;
}

/** The rows of the README's settings table: `| \`repogate.x\` | \`default as JSON\` | meaning |`. */
function settingsTable(readme: string): Row[] {
  const section = readme.split(/^## /m).find((s) => s.startsWith('Settings\n'));
  assert.ok(section, 'README.md has no "## Settings" section');
  return section
    .split('\n')
    .filter((line) => /^\|\s*`repogate\./.test(line))
    .map((line) => {
      const [key, defaultText, ...meaning] = line
        .replace(/^\|/, '')
        .replace(/\|\s*$/, '')
        .split(' | ');
      const name = key.trim().replace(/`/g, '');
      return { key: name, defaultText: defaultText.trim(), meaning: meaning.join(' | ').trim() };
    });
}

describe('README settings table', () => {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    contributes: { configuration: { properties: Record<string, { default: unknown }> } };
  };
  const properties = pkg.contributes.configuration.properties;
  const rows = settingsTable(readFileSync(path.join(ROOT, 'README.md'), 'utf8'));

  it('has one row for every contributed setting and none for a setting that does not exist', () => {
    const keys = rows.map((r) => r.key);
    assert.deepEqual(
      keys.filter((k, i) => keys.indexOf(k) !== i),
      [],
      'settings listed twice',
    );
    assert.deepEqual(
      Object.keys(properties).filter((k) => !keys.includes(k)),
      [],
      'settings missing from the README',
    );
    assert.deepEqual(
      keys.filter((k) => !(k in properties)),
      [],
      'README rows for settings package.json lacks',
    );
  });

  it("gives each setting package.json's default and a meaning", () => {
    for (const row of rows) {
      const written = /^`(.*)`$/.exec(row.defaultText);
      assert.ok(written, `${row.key}: the default must be written as JSON in backticks, not ${row.defaultText}`);
      let value: unknown;
      assert.doesNotThrow(() => (value = JSON.parse(written[1])), `${row.key}: ${written[1]} is not JSON`);
      assert.deepEqual(value, properties[row.key].default, `${row.key}: README default differs from package.json`);
      assert.ok(row.meaning.length > 10, `${row.key}: no meaning given`);
    }
  });
});
