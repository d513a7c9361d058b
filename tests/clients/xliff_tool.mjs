// The npm `xliff` package (locize), a real XLIFF writer and reader, on both
// sides of Tolk's XLIFF filter.
//
// Usage: node xliff_tool.mjs write DIR       # DIR/app-2.0.xlf, DIR/app-1.2.xlf
//        node xliff_tool.mjs read FILE       # the file's units as JSON
//   TOLK_TEST_NODE   folder whose node_modules holds xliff

import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(join(process.env.TOLK_TEST_NODE, 'node_modules', 'x.js'));
const xliff = require('xliff');

const [mode, path] = process.argv.slice(2);

if (mode === 'write') {
  const resources = {
    resources: {
      app: {
        greeting: { source: 'The house is big.' },
        welcome: {
          source: [
            'Welcome ',
            { Standalone: { id: 'name', equiv: '{name}' } },
            ', the dog runs in the park.',
          ],
        },
        bold: {
          source: ['The ', { GenericSpan: { id: 'b', contents: 'cat' } }, ' sleeps.'],
        },
      },
    },
    sourceLanguage: 'en-US',
    targetLanguage: 'es-ES',
  };
  writeFileSync(join(path, 'app-2.0.xlf'), await xliff.js2xliff(resources));
  writeFileSync(join(path, 'app-1.2.xlf'), await xliff.jsToXliff12(resources));
} else if (mode === 'read') {
  const text = readFileSync(path, 'utf8');
  const version = /version="1\.2"/.test(text) ? '1.2' : '2.0';
  const js = version === '1.2' ? await xliff.xliff12ToJs(text) : await xliff.xliff2js(text);
  console.log(JSON.stringify({ version, targetLanguage: js.targetLanguage, units: js.resources.app }));
} else {
  throw new Error(`unknown mode ${mode}`);
}
