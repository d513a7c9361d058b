"""Reads a Markdown file with Python-Markdown (tables extension) and prints,
as JSON, how many of each HTML element it renders and the text of the
paragraphs, headings, list items and table cells.

    python3 read_markdown.py FILE
"""

import json
import sys
from html.parser import HTMLParser

import markdown


class Reader(HTMLParser):
    KEPT = {"p", "h1", "h2", "li", "blockquote", "code", "pre", "a", "strong", "em",
            "table", "td", "th", "img", "div"}
    BLOCKS = {"p", "h1", "h2", "li", "td", "th"}

    def __init__(self):
        super().__init__()
        self.counts, self.texts, self.stack = {}, [], []

    def handle_starttag(self, tag, attrs):
        if tag in self.KEPT:
            self.counts[tag] = self.counts.get(tag, 0) + 1
        if tag in self.BLOCKS:
            self.stack.append([])

    def handle_endtag(self, tag):
        if tag in self.BLOCKS and self.stack:
            self.texts.append(" ".join("".join(self.stack.pop()).split()))

    def handle_data(self, data):
        if self.stack:
            self.stack[-1].append(data)


text = open(sys.argv[1], encoding="utf-8").read()
reader = Reader()
reader.feed(markdown.markdown(text, extensions=["tables", "fenced_code", "meta"]))
print(json.dumps({"counts": reader.counts, "texts": reader.texts}))
