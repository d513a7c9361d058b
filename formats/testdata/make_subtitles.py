"""Writes and reads the subtitle files of the subtitles filter's tests.

    python3 make_subtitles.py write DIR    # DIR/film.srt (srt), DIR/film.vtt (webvtt-py)
    python3 make_subtitles.py read FILE    # the cues as JSON: start, end, text, seconds

The SubRip file is composed by the `srt` library (with italics and a two-line
cue), the WebVTT file by webvtt-py (converted from that SubRip file, as tools
do, then given a cue with a voice span).
"""

import datetime
import json
import sys
from pathlib import Path

import srt
import webvtt
from webvtt import Caption


def write(folder):
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    t = lambda s: datetime.timedelta(seconds=s)
    subs = [
        srt.Subtitle(1, t(1), t(3.5), "The house is <i>very</i> big\nand the garden is small."),
        srt.Subtitle(2, t(4), t(6), "The dog sleeps in the garden."),
        srt.Subtitle(3, t(7), t(9), "Good morning!"),
    ]
    (out / "film.srt").write_text(srt.compose(subs), encoding="utf-8")
    vtt = webvtt.from_srt(str(out / "film.srt"))
    vtt.captions.append(Caption("00:00:10.000", "00:00:12.000", "<v Ann>The cat is black.</v>"))
    vtt.save(str(out / "film.vtt"))


def read(path):
    if path.endswith(".srt"):
        cues = [
            {"start": str(s.start), "end": str(s.end), "text": s.content.replace("\n", " "),
             "seconds": [s.start.total_seconds(), s.end.total_seconds()]}
            for s in srt.parse(Path(path).read_text(encoding="utf-8"))
        ]
    else:
        cues = [
            {"start": c.start, "end": c.end, "text": c.text.replace("\n", " "),
             "seconds": [c.start_in_seconds, c.end_in_seconds]}
            for c in webvtt.read(path)
        ]
    print(json.dumps(cues))


if __name__ == "__main__":
    {"write": write, "read": read}[sys.argv[1]](sys.argv[2])
