"""DeepL's official Python client (PyPI `deepl`) against Tolk, unchanged.

Usage: deepl_python.py SERVER_URL AUTH_KEY WORKDIR

Calls every operation the client offers that Tolk serves, asserts each answer
as the client parses it, and prints one line `ok <operation>` per operation.
A failed assertion or a client exception ends the script with a traceback.
"""

import io
import pathlib
import re
import sys

import deepl
from deepl.api_data import MultilingualGlossaryDictionaryEntries as Dictionary

server_url, auth_key, workdir = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
client = deepl.DeepLClient(auth_key, server_url=server_url, send_platform_info=False)


def ok(operation):
    print("ok", operation, flush=True)


def v3_entries(glossary, source, target):
    """A v3 dictionary's entries: the client hands back the API's TSV text."""
    tsv = client.get_multilingual_glossary_entries(glossary, source, target).dictionaries[0].entries
    return deepl.util.convert_tsv_to_dict(tsv)


# Usage and languages: the target list comes from `GET /v2/languages` with the
# form body `type=target`.
usage = client.get_usage()
assert usage.character is not None and usage.character.valid, usage
ok("get_usage")
sources = {l.code for l in client.get_source_languages()}
targets = {l.code for l in client.get_target_languages()}
assert "EN" in sources and "EN-US" not in sources, sources
assert {"ES", "EN-US", "EN-GB", "PT-PT"} <= targets and "EN" not in targets, targets
ok("get_source_languages")
ok("get_target_languages")
pairs = {(p.source_lang, p.target_lang) for p in client.get_glossary_languages()}
assert ("en", "es") in {(s.lower(), t.lower()) for s, t in pairs}, pairs
ok("get_glossary_languages")

# Text translation, JSON bodies.
r = client.translate_text("The house is big.", source_lang="EN", target_lang="ES")
assert r.text == "La casa es grande.", r.text
assert r.detected_source_lang == "EN", r.detected_source_lang
rs = client.translate_text(
    ["Good morning.", "The cat sleeps."],
    target_lang="ES",
    preserve_formatting=True,
    context="A short story.",
    extra_body_parameters={"show_billed_characters": True},
)
assert [x.detected_source_lang for x in rs] == ["EN", "EN"], rs
assert all(x.text and x.billed_characters for x in rs), rs
ok("translate_text")
r = client.translate_text(
    "<p>The <b>house</b> is big.</p>", source_lang="EN", target_lang="ES", tag_handling="xml"
)
assert "<b>" in r.text and "</b>" in r.text and "grande" in r.text, r.text
ok("translate_text tag_handling=xml")
# Each text of an array detected on its own.
rs = client.translate_text(
    ["Where is the train station, please?", "Bonjour tout le monde"], target_lang="ES"
)
assert [x.detected_source_lang for x in rs] == ["EN", "FR"], rs
assert "tren" in rs[0].text and "Where" not in rs[0].text, rs[0].text
assert "Bonjour" not in rs[1].text, rs[1].text
ok("translate_text mixed languages")
# Adjacent inline elements keep their own words, side by side.
for handling in ("xml", "html"):
    r = client.translate_text(
        "<p>This is <b>bold</b><i>italic</i> text.</p>",
        source_lang="EN",
        target_lang="ES",
        tag_handling=handling,
    )
    b = re.search(r"<b>([^<]+)</b>", r.text)
    i = re.search(r"<i>([^<]+)</i>", r.text)
    assert b and i and r.text.count("<b>") == 1 and r.text.count("<i>") == 1, r.text
    assert "italic" not in b.group(1) and "bold" not in i.group(1), r.text
    assert "texto" in r.text and "text." not in r.text, r.text
ok("translate_text adjacent tags")
r = client.translate_text("The house is big.", source_lang="EN", target_lang="EN-US")
assert r.text == "The house is big.", r.text
ok("translate_text same language")
try:
    client.translate_text("Hello", target_lang="XX")
    raise AssertionError("an unknown target language was accepted")
except deepl.DeepLException as e:
    assert "target_lang" in str(e), e
ok("translate_text unknown target")

# Glossaries v2.
g = client.create_glossary("Homes", "EN", "ES", {"house": "mansión", "big": "enorme"})
assert g.entry_count == 2 and g.ready, g
assert client.get_glossary(g.glossary_id).name == "Homes"
assert g.glossary_id in {x.glossary_id for x in client.list_glossaries()}
assert client.get_glossary_entries(g) == {"house": "mansión", "big": "enorme"}
r = client.translate_text("The house is big.", source_lang="EN", target_lang="ES", glossary=g)
assert "mansión" in r.text and "enorme" in r.text, r.text
csv = client.create_glossary_from_csv("From CSV", "EN", "ES", "car,coche\n")
assert csv.entry_count == 1, csv
client.delete_glossary(g)
client.delete_glossary(csv)
try:
    client.get_glossary(g.glossary_id)
    raise AssertionError("a deleted glossary was found")
except deepl.GlossaryNotFoundException:
    pass
ok("glossaries v2")

# Glossaries v3 (multilingual).
m = client.create_multilingual_glossary(
    "Rooms",
    [Dictionary("EN", "FR", {"kitchen": "cuisine"}), Dictionary("EN", "ES", {"kitchen": "cocina"})],
)
assert [(d.source_lang.upper(), d.target_lang.upper()) for d in m.dictionaries] == [
    ("EN", "FR"),
    ("EN", "ES"),
], m.dictionaries
assert client.get_multilingual_glossary(m.glossary_id).name == "Rooms"
assert m.glossary_id in {x.glossary_id for x in client.list_multilingual_glossaries()}
entries = v3_entries(m, "EN", "ES")
assert entries == {"kitchen": "cocina"}, entries
m = client.update_multilingual_glossary_dictionary(m, Dictionary("EN", "ES", {"garden": "huerto"}))
entries = v3_entries(m, "EN", "ES")
assert entries == {"kitchen": "cocina", "garden": "huerto"}, entries
d = client.replace_multilingual_glossary_dictionary(m, Dictionary("EN", "ES", {"garden": "jardín"}))
assert d.entry_count == 1, d
m = client.update_multilingual_glossary_name(m, "Rooms and gardens")
assert m.name == "Rooms and gardens", m
client.delete_multilingual_glossary_dictionary(m, source_lang="EN", target_lang="FR")
m = client.get_multilingual_glossary(m.glossary_id)
assert [d.target_lang.upper() for d in m.dictionaries] == ["ES"], m.dictionaries
r = client.translate_text("The garden.", source_lang="EN", target_lang="ES", glossary=m)
assert "jardín" in r.text, r.text
client.delete_multilingual_glossary(m)
empty = client.create_multilingual_glossary("Empty", [])
assert empty.dictionaries == [], empty
client.delete_multilingual_glossary(empty)
ok("glossaries v3")

# Documents: upload, status, download through the queue.
out = io.BytesIO()
status = client.translate_document(
    b"The house is big.\n", out, target_lang="ES", filename="house.txt"
)
assert status.done and status.billed_characters, status
assert out.getvalue().decode("utf-8").strip() == "La casa es grande.", out.getvalue()
ok("translate_document")
html = workdir / "page.html"
html.write_text("<html><body><p>The house is big.</p></body></html>", encoding="utf-8")
client.translate_document_from_filepath(html, workdir / "page.es.html", target_lang="ES")
assert "La casa es grande." in (workdir / "page.es.html").read_text(encoding="utf-8")
ok("translate_document_from_filepath")

# Write.
w = client.correct_text("Teh weather is beautifull today.", target_lang="en-US")
assert w.text == "The weather is beautiful today.", w.text
assert w.target_language.lower() == "en-us", w.target_language
ok("correct_text")
w = client.rephrase_text("The house has three bedrooms.", target_lang="en")
assert w.text and w.target_language.lower() == "en-us", (w.text, w.target_language)
ok("rephrase_text")

# Style rules.
s = client.create_style_rule(
    "House style", "en", configured_rules={"punctuation": {"apostrophe": "use_curly_apostrophes"}}
)
assert s.name == "House style" and s.language == "en", s
assert s.style_id in {x.style_id for x in client.get_all_style_rules()}
assert client.get_style_rule(s.style_id).name == "House style"
s = client.update_style_rule_name(s, "Company style")
assert s.name == "Company style", s
client.update_style_rule_configured_rules(
    s, {"punctuation": {"apostrophe": "use_straight_apostrophes"}}
)
ci = client.create_style_rule_custom_instruction(s, "Tone", "Use a friendly tone.")
assert client.get_style_rule_custom_instruction(s, ci.id).prompt == "Use a friendly tone."
ci = client.update_style_rule_custom_instruction(s, ci.id, "Tone", "Use a formal tone.")
assert ci.prompt == "Use a formal tone.", ci
client.delete_style_rule_custom_instruction(s, ci.id)
client.delete_style_rule(s)
assert s.style_id not in {x.style_id for x in client.get_all_style_rules()}
ok("style rules")

# Translation memories: import by upload URL, segments, use, export, delete.
tmx = workdir / "memory.tmx"
tmx.write_text(
    '<?xml version="1.0" encoding="UTF-8"?>\n<tmx version="1.4"><header creationtool="t" '
    'creationtoolversion="1" segtype="sentence" o-tmf="t" adminlang="en" srclang="en" '
    'datatype="plaintext"/><body><tu><tuv xml:lang="en"><seg>The house is big.</seg></tuv>'
    '<tuv xml:lang="es"><seg>La vivienda es amplia.</seg></tuv></tu></body></tmx>\n',
    encoding="utf-8",
)
job = client.import_translation_memory_from_filepath(tmx, display_name="Homes", timeout_s=120)
tm_id = job.result.translation_memory_id
tm = client.get_translation_memory(tm_id)
assert tm.name == "Homes", tm
assert tm_id in {x.translation_memory_id for x in client.list_translation_memories()}
segments = client.list_translation_memory_segments(tm_id)
assert len(segments.segments) == 1, segments
r = client.translate_text(
    "The house is big.", source_lang="EN", target_lang="ES", translation_memory=tm_id
)
assert r.text == "La vivienda es amplia.", r.text
client.export_translation_memory_to_filepath(tm_id, workdir / "export.tmx", timeout_s=120)
assert "La vivienda es amplia." in (workdir / "export.tmx").read_text(encoding="utf-8")
client.delete_translation_memory(tm_id)
ok("translation memories")

# A wrong key.
try:
    deepl.DeepLClient("not-a-key", server_url=server_url).get_usage()
    raise AssertionError("a wrong key was accepted")
except deepl.AuthorizationException:
    pass
ok("wrong key")
