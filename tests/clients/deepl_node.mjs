// DeepL's official Node.js client (npm `deepl-node`) against Tolk, unchanged.
//
// Usage: node deepl_node.mjs SERVER_URL AUTH_KEY WORKDIR
//   TOLK_TEST_NODE   folder whose node_modules holds deepl-node
//
// Calls every operation the client offers that Tolk serves, asserts each
// answer as the client parses it, and prints one line `ok <operation>` per
// operation. deepl-node sends /v2/translate as a form (with
// tag_handling_version, style_id, custom_instructions) and v3 glossary
// dictionaries in dot notation (`dictionaries[0].source_lang=…`).

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(join(process.env.TOLK_TEST_NODE, 'node_modules', 'x.js'));
const deepl = require('deepl-node');

const [serverUrl, authKey, workdir] = process.argv.slice(2);
const client = new deepl.DeepLClient(authKey, { serverUrl, sendPlatformInfo: false });
const ok = (operation) => console.log(`ok ${operation}`);

// Usage and languages.
const usage = await client.getUsage();
assert.ok(usage.character, 'character usage');
ok('getUsage');
const sources = new Set((await client.getSourceLanguages()).map((l) => l.code.toUpperCase()));
const targets = new Set((await client.getTargetLanguages()).map((l) => l.code.toUpperCase()));
assert.ok(sources.has('EN') && !sources.has('EN-US'), [...sources].join());
for (const code of ['ES', 'EN-US', 'EN-GB', 'PT-PT']) assert.ok(targets.has(code), code);
assert.ok(!targets.has('EN'));
ok('getSourceLanguages');
ok('getTargetLanguages');
const pairs = await client.getGlossaryLanguagePairs();
assert.ok(pairs.some((p) => p.sourceLang.toLowerCase() === 'en' && p.targetLang.toLowerCase() === 'es'));
ok('getGlossaryLanguagePairs');

// Text translation: form bodies.
let r = await client.translateText('The house is big.', 'en', 'es');
assert.equal(r.text, 'La casa es grande.');
assert.equal(r.detectedSourceLang, 'en');
const rs = await client.translateText(['Good morning.', 'The cat sleeps.'], null, 'es', {
  preserveFormatting: true,
  context: 'A short story.',
  splitSentences: 'nonewlines',
});
assert.deepEqual(rs.map((x) => x.detectedSourceLang), ['en', 'en']);
ok('translateText');
r = await client.translateText('<p>The <b>house</b> is big.</p>', 'en', 'es', {
  tagHandling: 'html',
  tagHandlingVersion: 'v2',
});
assert.ok(r.text.includes('<b>') && r.text.includes('grande'), r.text);
ok('translateText tagHandlingVersion');
// Each text of an array detected on its own.
const mixed = await client.translateText(
  ['Where is the train station, please?', 'Bonjour tout le monde'], null, 'es');
assert.deepEqual(mixed.map((x) => x.detectedSourceLang), ['en', 'fr']);
assert.ok(mixed[0].text.includes('tren') && !mixed[0].text.includes('Where'), mixed[0].text);
assert.ok(!mixed[1].text.includes('Bonjour'), mixed[1].text);
ok('translateText mixed languages');
// Adjacent inline elements keep their own words, side by side.
for (const tagHandling of ['xml', 'html']) {
  const t = (await client.translateText(
    '<p>This is <b>bold</b><i>italic</i> text.</p>', 'en', 'es', { tagHandling })).text;
  const b = /<b>([^<]+)<\/b>/.exec(t);
  const i = /<i>([^<]+)<\/i>/.exec(t);
  assert.ok(b && i && t.split('<b>').length === 2 && t.split('<i>').length === 2, t);
  assert.ok(!b[1].includes('italic') && !i[1].includes('bold'), t);
  assert.ok(t.includes('texto') && !t.includes('text.'), t);
}
ok('translateText adjacent tags');
r = await client.translateText('The house is big.', 'en', 'en-US');
assert.equal(r.text, 'The house is big.');
ok('translateText same language');
await assert.rejects(client.translateText('Hello', null, 'xx'), deepl.DeepLError);
ok('translateText unknown target');

// Glossaries v2.
const g = await client.createGlossary('Homes', 'en', 'es', new deepl.GlossaryEntries({
  entries: { house: 'mansión', big: 'enorme' },
}));
assert.equal(g.entryCount, 2);
assert.equal((await client.getGlossary(g.glossaryId)).name, 'Homes');
assert.ok((await client.listGlossaries()).some((x) => x.glossaryId === g.glossaryId));
assert.deepEqual((await client.getGlossaryEntries(g)).entries(), { house: 'mansión', big: 'enorme' });
r = await client.translateText('The house is big.', 'en', 'es', { glossary: g });
assert.ok(r.text.includes('mansión') && r.text.includes('enorme'), r.text);
const csv = await client.createGlossaryWithCsv('From CSV', 'en', 'es', Buffer.from('car,coche\n'));
assert.equal(csv.entryCount, 1);
await client.deleteGlossary(g);
await client.deleteGlossary(csv);
await assert.rejects(client.getGlossary(g.glossaryId), deepl.GlossaryNotFoundError);
ok('glossaries v2');

// Glossaries v3: dictionaries in dot notation, in request order.
let m = await client.createMultilingualGlossary('Rooms', [
  { sourceLangCode: 'en', targetLangCode: 'fr', entries: new deepl.GlossaryEntries({ entries: { kitchen: 'cuisine' } }) },
  { sourceLangCode: 'en', targetLangCode: 'es', entries: new deepl.GlossaryEntries({ entries: { kitchen: 'cocina' } }) },
]);
assert.deepEqual(m.dictionaries.map((d) => d.targetLangCode.toLowerCase()), ['fr', 'es']);
assert.equal((await client.getMultilingualGlossary(m.glossaryId)).name, 'Rooms');
assert.ok((await client.listMultilingualGlossaries()).some((x) => x.glossaryId === m.glossaryId));
let entries = await client.getMultilingualGlossaryDictionaryEntries(m, 'en', 'es');
assert.deepEqual(entries.entries.entries(), { kitchen: 'cocina' });
m = await client.updateMultilingualGlossaryDictionary(m, {
  sourceLangCode: 'en', targetLangCode: 'es', entries: new deepl.GlossaryEntries({ entries: { garden: 'huerto' } }),
});
entries = await client.getMultilingualGlossaryDictionaryEntries(m, 'en', 'es');
assert.deepEqual(entries.entries.entries(), { kitchen: 'cocina', garden: 'huerto' });
const replaced = await client.replaceMultilingualGlossaryDictionary(m, {
  sourceLangCode: 'en', targetLangCode: 'es', entries: new deepl.GlossaryEntries({ entries: { garden: 'jardín' } }),
});
assert.equal(replaced.entryCount, 1);
m = await client.updateMultilingualGlossaryName(m, 'Rooms and gardens');
assert.equal(m.name, 'Rooms and gardens');
await client.deleteMultilingualGlossaryDictionary(m, 'en', 'fr');
m = await client.getMultilingualGlossary(m.glossaryId);
assert.deepEqual(m.dictionaries.map((d) => d.targetLangCode.toLowerCase()), ['es']);
r = await client.translateText('The garden.', 'en', 'es', { glossary: m });
assert.ok(r.text.includes('jardín'), r.text);
await client.deleteMultilingualGlossary(m);
const withCsv = await client.createMultilingualGlossaryWithCsv('CSV', 'en', 'es', 'car,coche\n');
assert.equal(withCsv.dictionaries[0].entryCount, 1);
await client.deleteMultilingualGlossary(withCsv);
ok('glossaries v3');

// Documents.
const input = join(workdir, 'house.txt');
writeFileSync(input, 'The house is big.\n');
const output = join(workdir, 'house.es.txt');
const status = await client.translateDocument(input, output, 'en', 'es');
assert.ok(status.done(), JSON.stringify(status));
assert.equal(readFileSync(output, 'utf8').trim(), 'La casa es grande.');
ok('translateDocument');

// Write.
const w = await client.rephraseText('The house has three bedrooms.', 'en-US', 'prefer_business');
assert.ok(w.text.length > 0);
ok('rephraseText');

// Style rules, then a translation that names one (style_id in the form).
let s = await client.createStyleRule({
  name: 'House style',
  language: 'es',
  configured_rules: { punctuation: { apostrophe: 'use_curly_apostrophes' } },
});
assert.equal(s.name, 'House style');
assert.ok((await client.getAllStyleRules()).some((x) => x.styleId === s.styleId));
assert.equal((await client.getStyleRule(s.styleId)).name, 'House style');
s = await client.updateStyleRuleName(s.styleId, 'Company style');
assert.equal(s.name, 'Company style');
await client.updateStyleRuleConfiguredRules(s.styleId, { punctuation: { apostrophe: 'use_straight_apostrophes' } });
let ci = await client.createStyleRuleCustomInstruction(s.styleId, { label: 'Tone', prompt: 'Use a friendly tone.' });
assert.equal((await client.getStyleRuleCustomInstruction(s.styleId, ci.id)).prompt, 'Use a friendly tone.');
ci = await client.updateStyleRuleCustomInstruction(s.styleId, ci.id, { label: 'Tone', prompt: 'Use a formal tone.' });
assert.equal(ci.prompt, 'Use a formal tone.');
r = await client.translateText('The house is big.', 'en', 'es', { styleRule: s.styleId });
assert.ok(r.text.length > 0);
await client.deleteStyleRuleCustomInstruction(s.styleId, ci.id);
await client.deleteStyleRule(s.styleId);
assert.ok(!(await client.getAllStyleRules()).some((x) => x.styleId === s.styleId));
ok('style rules');

// Translation memories: import by upload URL, segments, use, export, delete.
const tmx = Buffer.from(
  '<?xml version="1.0" encoding="UTF-8"?>\n<tmx version="1.4"><header creationtool="t" '
  + 'creationtoolversion="1" segtype="sentence" o-tmf="t" adminlang="en" srclang="en" '
  + 'datatype="plaintext"/><body><tu><tuv xml:lang="en"><seg>The house is big.</seg></tuv>'
  + '<tuv xml:lang="es"><seg>La vivienda es amplia.</seg></tuv></tu></body></tmx>\n',
);
const created = await client.createTranslationMemoryImport('memory.tmx', tmx.length, { displayName: 'Homes' });
await client.uploadTranslationMemoryFile(created, tmx);
let job = await client.isTranslationMemoryJobComplete(created.jobId, 120000);
const tmId = job.translationMemoryId ?? job.results[0]?.translationMemoryId;
assert.ok(tmId, JSON.stringify(job));
assert.equal((await client.getTranslationMemory(tmId)).name, 'Homes');
assert.ok((await client.listTranslationMemories()).some((x) => x.translationMemoryId === tmId));
assert.equal((await client.listTranslationMemorySegments(tmId)).segments.length, 1);
r = await client.translateText('The house is big.', 'en', 'es', { translationMemory: tmId });
assert.equal(r.text, 'La vivienda es amplia.');
const exported = await client.createTranslationMemoryExport(tmId);
job = await client.isTranslationMemoryJobComplete(exported.jobId, 120000);
const exportPath = join(workdir, 'export.tmx');
await client.downloadTranslationMemoryExport(job, exportPath);
assert.ok(readFileSync(exportPath, 'utf8').includes('La vivienda es amplia.'));
await client.deleteTranslationMemory(tmId);
ok('translation memories');

// A wrong key.
await assert.rejects(new deepl.DeepLClient('not-a-key', { serverUrl }).getUsage(), deepl.AuthorizationError);
ok('wrong key');
