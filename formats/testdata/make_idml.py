"""Writes and reads the InDesign Markup (IDML) packages of the IDML filter's
tests. No free tool writes IDML, so the package is written here from Adobe's
IDML specification (a ZIP: `mimetype` first and stored, `designmap.xml`,
stories in `Stories/`), and read back with Python's zipfile and
xml.etree/xml.dom modules, independently of the filter.

    python3 make_idml.py write FILE.idml [PROSE.txt]
    python3 make_idml.py read FILE.idml     # JSON: texts and counts per story

The story has a heading, a paragraph with a bold run, paragraphs separated
by `Br` within one range, a page-number special character (`<?ACE 18?>`),
a hyperlink, a table with two cells and a footnote; a second story holds a
caption (or, given a prose file, that prose).
"""

import json
import sys
import zipfile
from xml.dom import minidom
from xml.sax.saxutils import escape

NS = "http://ns.adobe.com/AdobeInDesign/idml/1.0/packaging"
PLAIN = 'AppliedCharacterStyle="CharacterStyle/$ID/[No character style]"'
NORMAL = 'AppliedParagraphStyle="ParagraphStyle/$ID/NormalParagraphStyle"'


def story(self_id, body):
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        f'<idPkg:Story xmlns:idPkg="{NS}" DOMVersion="16.0">\n'
        f'\t<Story Self="{self_id}" UserText="true" TrackChanges="false" StoryTitle="$ID/">\n'
        '\t\t<StoryPreference OpticalMarginAlignment="false" FrameType="TextFrameType"/>\n'
        f"{body}"
        "\t</Story>\n"
        "</idPkg:Story>\n"
    )


def paragraph(style, runs):
    return f"\t\t<ParagraphStyleRange {style}>\n{runs}\t\t</ParagraphStyleRange>\n"


def run(content, attrs=PLAIN):
    return f"\t\t\t<CharacterStyleRange {attrs}>\n{content}\t\t\t</CharacterStyleRange>\n"


def cell(name, text):
    return (
        f'<Cell Self="t1i{name}" Name="{name}" RowSpan="1" ColumnSpan="1">'
        f'<ParagraphStyleRange {NORMAL}><CharacterStyleRange {PLAIN}>'
        f"<Content>{text}</Content></CharacterStyleRange></ParagraphStyleRange></Cell>"
    )


MAIN = story(
    "u1",
    paragraph(
        'AppliedParagraphStyle="ParagraphStyle/Heading"',
        run("\t\t\t\t<Content>The annual report</Content>\n\t\t\t\t<Br/>\n"),
    )
    + paragraph(
        NORMAL,
        run("\t\t\t\t<Content>The house is </Content>\n")
        + run(
            "\t\t\t\t<Properties><AppliedFont type=\"string\">Minion Pro</AppliedFont></Properties>\n"
            "\t\t\t\t<Content>very big</Content>\n",
            PLAIN + ' FontStyle="Bold"',
        )
        + run(
            "\t\t\t\t<Content> and the garden is small.</Content>\n\t\t\t\t<Br/>\n"
            "\t\t\t\t<Content>The dog runs in the park &amp; the cat sleeps.</Content>\n"
            "\t\t\t\t<Br/>\n"
            "\t\t\t\t<Content>Page </Content>\n\t\t\t\t<Content><?ACE 18?></Content>\n"
            "\t\t\t\t<Content> of the book.</Content>\n\t\t\t\t<Br/>\n"
            "\t\t\t\t<Content>Read more on </Content>\n"
            '\t\t\t\t<HyperlinkTextSource Self="hts1" Name="link" Hidden="false">'
            "<Content>the website</Content></HyperlinkTextSource>\n"
            "\t\t\t\t<Content> today.</Content>\n\t\t\t\t<Br/>\n"
        ),
    )
    + paragraph(
        NORMAL,
        run(
            '\t\t\t\t<Table Self="t1" BodyRowCount="1" ColumnCount="2">'
            '<Row Self="t1Row0" Name="0"/><Column Self="t1Column0" Name="0"/>'
            '<Column Self="t1Column1" Name="1"/>'
            + cell("0:0", "The water is cold.")
            + cell("1:0", "The city is old.")
            + "</Table>\n"
            "\t\t\t\t<Content>The street is long.</Content>\n"
            f"\t\t\t\t<Footnote><ParagraphStyleRange {NORMAL}><CharacterStyleRange {PLAIN}>"
            "<Content><?ACE 4?></Content><Content>\tThe note is short.</Content>"
            "</CharacterStyleRange></ParagraphStyleRange></Footnote>\n"
        ),
    ),
)

CAPTION = story("u2", paragraph(NORMAL, run("\t\t\t\t<Content>The picture of the house</Content>\n")))

DESIGNMAP = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<?aid style="50" type="document" readerVersion="6.0" featureSet="257" product="16.0(0)" ?>\n'
    f'<Document xmlns:idPkg="{NS}" DOMVersion="16.0" Self="d" StoryList="u1 u2">\n'
    '\t<idPkg:Graphic src="Resources/Graphic.xml"/>\n'
    '\t<idPkg:Styles src="Resources/Styles.xml"/>\n'
    '\t<idPkg:Spread src="Spreads/Spread_s1.xml"/>\n'
    '\t<idPkg:Story src="Stories/Story_u1.xml"/>\n'
    '\t<idPkg:Story src="Stories/Story_u2.xml"/>\n'
    "</Document>\n"
)

CONTAINER = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
    '<rootfiles><rootfile full-path="designmap.xml" media-type="text/xml"/></rootfiles>'
    "</container>\n"
)


def resource(kind):
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        f'<idPkg:{kind} xmlns:idPkg="{NS}" DOMVersion="16.0"/>\n'
    )


SPREAD = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    f'<idPkg:Spread xmlns:idPkg="{NS}" DOMVersion="16.0"><Spread Self="s1">'
    '<TextFrame Self="tf1" ParentStory="u1"/><TextFrame Self="tf2" ParentStory="u2"/>'
    "</Spread></idPkg:Spread>\n"
)


def write(path, prose=None):
    caption = CAPTION
    if prose is not None:
        with open(prose, encoding="utf-8") as f:
            text = escape(f.read())
        caption = story("u2", paragraph(NORMAL, run(f"\t\t\t\t<Content>{text}</Content>\n")))
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.adobe.indesign-idml-package",
                   compress_type=zipfile.ZIP_STORED)
        deflated = zipfile.ZIP_DEFLATED
        z.writestr("designmap.xml", DESIGNMAP, compress_type=deflated)
        z.writestr("META-INF/container.xml", CONTAINER, compress_type=deflated)
        z.writestr("Resources/Graphic.xml", resource("Graphic"), compress_type=deflated)
        z.writestr("Resources/Styles.xml", resource("Styles"), compress_type=deflated)
        z.writestr("Spreads/Spread_s1.xml", SPREAD, compress_type=deflated)
        z.writestr("Stories/Story_u1.xml", MAIN, compress_type=deflated)
        z.writestr("Stories/Story_u2.xml", caption, compress_type=deflated)


def read(path):
    out = {"entries": [], "stories": {}}
    with zipfile.ZipFile(path) as z:
        first = z.infolist()[0]
        out["first"] = [first.filename, first.compress_type == zipfile.ZIP_STORED]
        for info in z.infolist():
            out["entries"].append(info.filename)
            if not info.filename.startswith("Stories/"):
                continue
            doc = minidom.parseString(z.read(info.filename))
            paragraphs = []
            for psr in doc.getElementsByTagName("ParagraphStyleRange"):
                if psr.parentNode.nodeName == "Story":
                    paragraphs.append(text_of(psr))
            out["stories"][info.filename] = {
                "paragraphs": paragraphs,
                "cells": [text_of(c) for c in doc.getElementsByTagName("Cell")],
                "footnotes": [text_of(f) for f in doc.getElementsByTagName("Footnote")],
                "links": [[h.getAttribute("Self"), text_of(h)]
                          for h in doc.getElementsByTagName("HyperlinkTextSource")],
                "bold": [text_of(r) for r in doc.getElementsByTagName("CharacterStyleRange")
                         if r.getAttribute("FontStyle") == "Bold"],
                "counts": {name: len(doc.getElementsByTagName(name)) for name in (
                    "ParagraphStyleRange", "CharacterStyleRange", "Br", "Table", "Cell",
                    "Footnote", "HyperlinkTextSource", "Properties")},
                "special": sum(1 for c in doc.getElementsByTagName("Content")
                               for n in c.childNodes if n.nodeType == n.PROCESSING_INSTRUCTION_NODE),
            }
    print(json.dumps(out, ensure_ascii=False))


def text_of(node):
    """The text of the node's Content elements, Br as a newline, nested
    tables and footnotes left out."""
    parts = []
    for child in node.childNodes:
        if child.nodeType == child.TEXT_NODE:
            if node.nodeName == "Content":
                parts.append(child.data)
        elif child.nodeName == "Br":
            parts.append("\n")
        elif child.nodeName not in ("Table", "Footnote"):
            parts.append(text_of(child))
    return "".join(parts)


if __name__ == "__main__":
    {"write": write, "read": read}[sys.argv[1]](*sys.argv[2:])
