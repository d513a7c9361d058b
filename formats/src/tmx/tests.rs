use super::*;

const SAMPLE: &str = r##"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE tmx SYSTEM "tmx14.dtd">
<tmx version="1.4">
  <header creationtool="test" creationtoolversion="1" segtype="sentence"
          o-tmf="x" adminlang="en-US" srclang="en-US" datatype="html">
    <note>Header note</note>
    <prop type="x-domain">Legal</prop>
    <ude name="MacRoman"><map unicode="#x00E6" code="#xBE" ent="aelig"/></ude>
  </header>
  <body>
    <tu tuid="1" datatype="html">
      <note>A unit note &amp; more</note>
      <prop type="x-client">ACME</prop>
      <tuv xml:lang="en-US" creationid="me">
        <prop type="x-origin">human</prop>
        <seg>Press <bpt i="1" x="1">&lt;b&gt;</bpt>Save<ept i="1">&lt;/b&gt;</ept> now<ph x="2">&lt;br/&gt;</ph> <hi type="bold">and wait</hi>.</seg>
      </tuv>
      <tuv xml:lang="de-DE">
        <note>checked</note>
        <seg>Drücken Sie <bpt i="1" x="1">&lt;b&gt;</bpt>Speichern<ept i="1">&lt;/b&gt;</ept><ph x="2">&lt;br/&gt;</ph> <hi type="bold">und warten</hi>.</seg>
      </tuv>
      <tuv xml:lang="fr-FR"><seg>Appuyez <it pos="begin">&lt;i&gt;</it>ici</seg></tuv>
    </tu>
    <tu tuid="2">
      <tuv xml:lang="en-US"><seg>Hello &#x263A; <![CDATA[<raw>]]></seg></tuv>
      <tuv xml:lang="de-DE"><seg>Hallo</seg></tuv>
    </tu>
    <tu tuid="3"><tuv><seg>no language</seg></tuv></tu>
    <tu tuid="4"><tuv xml:lang="en"><seg>bad <b>inline</b></seg></tuv></tu>
    <tu tuid="5"><tuv xml:lang="en"></tuv></tu>
    <tu tuid="6"/>
    <foo/>
  </body>
</tmx>
"##;

fn read_all(input: &str) -> Result<(Header, Vec<Entry>), TmxError> {
    let mut r = TmxReader::new(input.as_bytes())?;
    let header = r.header().clone();
    let mut out = Vec::new();
    while let Some(e) = r.next_entry()? {
        out.push(e);
    }
    Ok((header, out))
}

fn units(entries: &[Entry]) -> Vec<&Unit> {
    entries
        .iter()
        .filter_map(|e| match e {
            Entry::Unit(u) => Some(u),
            Entry::Skipped { .. } => None,
        })
        .collect()
}

#[test]
fn reads_header_units_inline_tags_notes_and_props() {
    let (header, entries) = read_all(SAMPLE).unwrap();
    assert_eq!(header.srclang(), Some("en-US"));
    assert_eq!(header.attr("datatype"), Some("html"));
    assert_eq!(header.notes[0].text, "Header note");
    assert_eq!(header.props[0].attrs, [("type".into(), "x-domain".into())]);
    assert_eq!(header.extra.len(), 1);
    assert!(header.extra[0].starts_with("<ude name=\"MacRoman\"><map "));

    let us = units(&entries);
    assert_eq!(us.len(), 2);
    let u = us[0];
    assert_eq!(u.line, 11);
    assert_eq!(u.attr("tuid"), Some("1"));
    assert_eq!(u.notes[0].text, "A unit note & more");
    assert_eq!(u.props[0].text, "ACME");
    assert_eq!(u.variants.len(), 3);
    let en = &u.variants[0];
    assert_eq!(en.lang, "en-US");
    assert_eq!(en.attrs, [("creationid".into(), "me".into())]);
    assert_eq!(en.props[0].text, "human");
    assert_eq!(
        en.seg,
        r#"Press <bpt i="1" x="1">&lt;b&gt;</bpt>Save<ept i="1">&lt;/b&gt;</ept> now<ph x="2">&lt;br/&gt;</ph> <hi type="bold">and wait</hi>."#
    );
    assert_eq!(en.text, "Press Save now and wait.");
    assert_eq!(u.variants[1].notes[0].text, "checked");
    assert_eq!(u.variants[2].text, "Appuyez ici");
    assert_eq!(us[1].variants[0].text, "Hello \u{263A} <raw>");
    assert_eq!(us[1].variants[0].seg, "Hello \u{263A} &lt;raw&gt;");

    let skipped: Vec<(u64, &str)> = entries
        .iter()
        .filter_map(|e| match e {
            Entry::Skipped { line, reason } => Some((*line, reason.as_str())),
            Entry::Unit(_) => None,
        })
        .collect();
    assert_eq!(skipped.len(), 5, "{skipped:?}");
    assert!(skipped[0].1.contains("xml:lang"), "{skipped:?}");
    assert!(skipped[1].1.contains("<b>"), "{skipped:?}");
    assert!(skipped[2].1.contains("<seg>"), "{skipped:?}");
    assert!(skipped[3].1.contains("no <tuv>"), "{skipped:?}");
    assert!(skipped[4].1.contains("<foo>"), "{skipped:?}");
    assert_eq!(skipped[0].0, 28);
}

#[test]
fn writes_what_it_reads() {
    let (header, entries) = read_all(SAMPLE).unwrap();
    let mut w = TmxWriter::start(Vec::new(), &header).unwrap();
    for u in units(&entries) {
        w.write_unit(u).unwrap();
    }
    let out = String::from_utf8(w.finish().unwrap()).unwrap();
    let (header2, entries2) = read_all(&out).unwrap();
    assert_eq!(header2, header);
    let a: Vec<Unit> = units(&entries)
        .into_iter()
        .cloned()
        .map(strip_line)
        .collect();
    let b: Vec<Unit> = units(&entries2)
        .into_iter()
        .cloned()
        .map(strip_line)
        .collect();
    assert_eq!(a, b);
    assert_eq!(entries2.len(), 2);
}

fn strip_line(mut u: Unit) -> Unit {
    u.line = 0;
    u
}

#[test]
fn writer_adds_required_header_attributes() {
    let w = TmxWriter::start(Vec::new(), &Header::default()).unwrap();
    let out = String::from_utf8(w.finish().unwrap()).unwrap();
    for (k, _) in writer::REQUIRED_HEADER_ATTRS {
        assert!(out.contains(&format!(" {k}=\"")), "{k} missing in {out}");
    }
    let (h, e) = read_all(&out).unwrap();
    assert_eq!(h.srclang(), None);
    assert!(e.is_empty());
}

#[test]
fn units_survive_json() {
    let (_, entries) = read_all(SAMPLE).unwrap();
    let u = units(&entries)[0].clone();
    let json = serde_json::to_string(&u).unwrap();
    let mut back: Unit = serde_json::from_str(&json).unwrap();
    back.line = u.line;
    for (b, v) in back.variants.iter_mut().zip(&u.variants) {
        b.text = v.text.clone();
    }
    assert_eq!(back, u);
}

fn malformed_line(input: &str) -> (u64, String) {
    match read_all(input) {
        Err(TmxError::Malformed { line, message }) => (line, message),
        other => panic!("expected a malformed error, got {other:?}"),
    }
}

#[test]
fn malformed_files_name_the_line() {
    let head = "<tmx version=\"1.4\">\n<header srclang=\"en\"/>\n<body>\n";
    let ok_tu =
        "<tu><tuv xml:lang=\"en\"><seg>a</seg></tuv><tuv xml:lang=\"de\"><seg>b</seg></tuv></tu>\n";
    // Mismatched end tag on line 5.
    let doc = format!("{head}{ok_tu}<tu><tuv xml:lang=\"en\"><seg>a</tuv></tu>\n</body></tmx>\n");
    let (line, msg) = malformed_line(&doc);
    assert_eq!(line, 5, "{msg}");
    assert!(msg.contains("</tuv>"), "{msg}");
    // Truncated file: the end.
    let doc = format!("{head}{ok_tu}{ok_tu}<tu><tuv xml:lang=\"en\">");
    let (line, msg) = malformed_line(&doc);
    assert_eq!(line, 6, "{msg}");
    assert!(msg.contains("unclosed") || msg.contains("ends"), "{msg}");
    // Unknown entity on line 4.
    let doc =
        format!("{head}<tu><tuv xml:lang=\"en\"><seg>a &nbsp; b</seg></tuv></tu>\n</body></tmx>");
    let (line, msg) = malformed_line(&doc);
    assert_eq!(line, 4, "{msg}");
    assert!(msg.contains("nbsp"), "{msg}");
    // Bad attribute syntax on line 4.
    let doc =
        format!("{head}<tu tuid=1><tuv xml:lang=\"en\"><seg>a</seg></tuv></tu>\n</body></tmx>");
    assert_eq!(malformed_line(&doc).0, 4);
    // Not TMX.
    let (line, msg) = malformed_line("<?xml version=\"1.0\"?>\n<html/>");
    assert_eq!(line, 2);
    assert!(msg.contains("not a TMX"), "{msg}");
    // Garbage after the root.
    let doc = format!("{head}</body></tmx>\n<tmx/>");
    assert_eq!(malformed_line(&doc).0, 5);
    // Empty input.
    assert_eq!(malformed_line("").0, 1);
}

#[test]
fn long_segments_skip_their_unit_without_keeping_them() {
    let big = "x".repeat(reader::MAX_SEGMENT_BYTES + 10);
    let doc = format!(
        "<tmx version=\"1.4\"><header srclang=\"en\"/><body><tu><tuv xml:lang=\"en\"><seg>{big}</seg></tuv></tu><tu><tuv xml:lang=\"en\"><seg>ok</seg></tuv></tu></body></tmx>"
    );
    let (_, entries) = read_all(&doc).unwrap();
    assert!(matches!(&entries[0], Entry::Skipped { reason, .. } if reason.contains("longer")));
    assert!(matches!(&entries[1], Entry::Unit(_)));
}

/// A reader producing a long TMX on the fly: memory use of the parser must not
/// depend on the input's size.
struct Generated {
    units: usize,
    next: usize,
    pending: Vec<u8>,
    pos: usize,
    tail_done: bool,
}

impl std::io::Read for Generated {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos == self.pending.len() {
            self.pending.clear();
            self.pos = 0;
            if self.next == 0 {
                self.pending
                    .extend_from_slice(b"<tmx version=\"1.4\"><header srclang=\"en\"/><body>\n");
            }
            if self.next < self.units {
                let n = self.next;
                self.pending.extend_from_slice(format!("<tu tuid=\"{n}\"><tuv xml:lang=\"en\"><seg>Sentence number {n}.</seg></tuv><tuv xml:lang=\"de\"><seg>Satz Nummer {n}.</seg></tuv></tu>\n").as_bytes());
                self.next += 1;
            } else if !self.tail_done {
                self.pending.extend_from_slice(b"</body></tmx>\n");
                self.tail_done = true;
            } else {
                return Ok(0);
            }
        }
        let n = buf.len().min(self.pending.len() - self.pos);
        buf[..n].copy_from_slice(&self.pending[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[test]
fn streams_many_units() {
    let src = Generated {
        units: 20_000,
        next: 0,
        pending: Vec::new(),
        pos: 0,
        tail_done: false,
    };
    let mut r = TmxReader::new(std::io::BufReader::new(src)).unwrap();
    let mut n = 0;
    let mut last = None;
    while let Some(e) = r.next_entry().unwrap() {
        if let Entry::Unit(u) = e {
            n += 1;
            last = Some(u);
        }
    }
    assert_eq!(n, 20_000);
    let last = last.unwrap();
    assert_eq!(last.line, 20_001);
    assert_eq!(last.variants[1].text, "Satz Nummer 19999.");
}
