"""Reads a MIF file without the filter: statements and strings by regular
expressions (FrameMaker's `# end of Para` comments mark the paragraphs),
escapes decoded. Prints the text of every paragraph and how many of some
statements there are, as JSON.

    python3 read_mif.py FILE ENCODING     # utf-8 (MIF 8+) or mac_roman
"""
import json, re, sys
text = open(sys.argv[1], encoding=sys.argv[2]).read()
def unescape(s):
    s = re.sub(r"\\x([0-9a-fA-F]{2}) ", lambda m: bytes([int(m.group(1), 16)]).decode("mac_roman"), s)
    return s.replace("\\t", "\t").replace("\\q", "'").replace("\\Q", "`").replace("\\>", ">").replace("\\\\", "\\")
paras = []
for para in re.finditer(r"<Para\b(.*?)> # end of Para", text, re.S):
    body = para.group(1)
    strings = re.findall(r"<String `((?:[^'\\]|\\.)*)'>", body)
    paras.append("".join(unescape(s) for s in strings))
counts = {name: len(re.findall(r"<" + name + r"\b", text)) for name in ("Para", "ParaLine", "Font", "FNote", "Char HardReturn", "Char Tab", "Variable", "ATbl", "TextRectID")}
print(json.dumps({"paras": paras, "counts": counts}, ensure_ascii=False))
