//! The contract every package filter keeps, checked on files written by real
//! tools (python-docx, python-pptx, openpyxl, odfpy):
//!
//! * identity translation gives every entry back byte for byte;
//! * pseudo-translation (each text piece lengthened by 30 % and bracketed)
//!   keeps the structure: re-extracting the output gives as many segments,
//!   each with the same tags, holding the pseudo-translations;
//! * LibreOffice (headless, from Debian's packages) opens every output:
//!   converting it to PDF succeeds.

use std::path::{Path, PathBuf};

use crate::testdoc::{
    bracketed, entries, map_text, raw_entries, tags, test_folder, testdata_script,
};
use crate::{DocumentFormat, extract, inline};

/// Every format's sample, written by its real tool into `dir`.
fn samples(dir: &Path) -> Vec<(PathBuf, DocumentFormat)> {
    testdata_script("make_docx.py", &[dir]);
    testdata_script("make_odf.py", &[Path::new("write"), dir]);
    let pptx = dir.join("deck.pptx");
    testdata_script("make_pptx.py", &[Path::new("write"), &pptx]);
    let xlsx = dir.join("book.xlsx");
    testdata_script("make_xlsx.py", &[&xlsx]);
    vec![
        (dir.join("hyperlinks.docx"), DocumentFormat::Docx),
        (dir.join("breaks.docx"), DocumentFormat::Docx),
        (dir.join("tables.docx"), DocumentFormat::Docx),
        (pptx, DocumentFormat::Pptx),
        (xlsx, DocumentFormat::Xlsx),
        (dir.join("doc.odt"), DocumentFormat::Odt),
        (dir.join("slides.odp"), DocumentFormat::Odp),
        (dir.join("book.ods"), DocumentFormat::Ods),
    ]
}

/// A text piece 30 % longer, bracketed (spaces at its ends kept outside).
fn pseudo(text: &str) -> String {
    bracketed(text, |core| {
        "~".repeat(core.chars().count().div_ceil(10) * 3)
    })
}

#[test]
fn every_package_filter_keeps_the_contract_and_libreoffice_opens_the_output() {
    let dir = test_folder("contract");
    let out_dir = dir.join("pseudo");
    std::fs::create_dir_all(&out_dir).unwrap();
    let mut outputs = Vec::new();
    for (path, format) in samples(&dir) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let doc = extract(format, &bytes).unwrap();
        assert!(!doc.segments().is_empty(), "{name}");

        let same = doc.merge(doc.segments()).unwrap();
        assert_eq!(raw_entries(&same), raw_entries(&bytes), "{name}: identity");

        let translated: Vec<String> = doc.segments().iter().map(|s| map_text(s, pseudo)).collect();
        let out = doc.merge(&translated).unwrap();
        same_in_chunks(format, &bytes, &doc, &translated, &out);
        let again = extract(format, &out).unwrap();
        assert_eq!(again.segments().len(), doc.segments().len(), "{name}");
        for (before, after) in doc.segments().iter().zip(again.segments()) {
            assert_eq!(tags(after), tags(before), "{name}: {before} → {after}");
            assert_eq!(
                inline::plain_text(after),
                inline::plain_text(&map_text(before, pseudo)),
                "{name}"
            );
        }
        // Unique stems: LibreOffice names each PDF after its input's stem.
        let out_path = out_dir.join(format!("{}-{name}", format.extension()));
        std::fs::write(&out_path, out).unwrap();
        outputs.push(out_path);
    }

    let pdf_dir = dir.join("pdf");
    let status = soffice(&dir, "pdf", &pdf_dir, &outputs);
    for output in &outputs {
        let pdf = pdf_dir.join(output.with_extension("pdf").file_name().unwrap());
        let size = std::fs::metadata(&pdf).map(|m| m.len()).unwrap_or(0);
        assert!(
            size > 500,
            "LibreOffice did not convert {}: {}",
            output.display(),
            String::from_utf8_lossy(&status.stdout)
        );
    }
    // LibreOffice reads the pseudo-translated text of the word processor files.
    let texts: Vec<PathBuf> = outputs
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "docx" || e == "odt"))
        .cloned()
        .collect();
    let txt_dir = dir.join("txt");
    soffice(&dir, "txt:Text", &txt_dir, &texts);
    for output in &texts {
        let txt = txt_dir.join(output.with_extension("txt").file_name().unwrap());
        let text = std::fs::read_to_string(&txt).unwrap_or_default();
        assert!(text.contains("~]"), "{}: {text}", output.display());
    }
}

/// Code LibreOffice marks with its styles (an HTML page's `<code>`, `<tt>`
/// and `<pre>` become "Source Text", "Teletype" and "Preformatted Text", in
/// ODF through an automatic paragraph style) stays as written in its Writer
/// and Word files, the prose around it translated; LibreOffice reads both.
#[test]
fn code_in_libreoffice_code_styles_is_kept_in_odt_and_docx() {
    let dir = test_folder("code-styles");
    let page = dir.join("page.html");
    std::fs::write(
        &page,
        "<html><body><p>Run the command <code>make install</code> to build the house.</p>\
         <pre>cargo build --release</pre><p>The <tt>--verbose</tt> flag is long.</p></body></html>",
    )
    .unwrap();
    let written = dir.join("written");
    soffice(&dir, "odt", &written, std::slice::from_ref(&page));
    soffice(
        &dir,
        "docx:MS Word 2007 XML",
        &written,
        std::slice::from_ref(&page),
    );
    let mut outputs = Vec::new();
    for format in [DocumentFormat::Odt, DocumentFormat::Docx] {
        let bytes = std::fs::read(written.join(format!("page.{}", format.extension()))).unwrap();
        let doc = extract(format, &bytes).unwrap();
        let plain: Vec<String> = doc
            .segments()
            .iter()
            .map(|s| inline::plain_text(s))
            .collect();
        assert!(
            plain
                .iter()
                .all(|p| !p.contains("cargo") && !p.contains("install") && !p.contains("verbose")),
            "{format:?}: {plain:?}"
        );
        let out = crate::testdoc::uppercase_merge(&doc);
        let path = dir.join(format!(
            "upper-{}.{}",
            format.extension(),
            format.extension()
        ));
        std::fs::write(&path, out).unwrap();
        outputs.push(path);
    }
    let txt = dir.join("txt");
    soffice(&dir, "txt:Text", &txt, &outputs);
    for output in &outputs {
        let text =
            std::fs::read_to_string(txt.join(output.with_extension("txt").file_name().unwrap()))
                .unwrap_or_default();
        for kept in [
            "RUN THE COMMAND make install TO BUILD THE HOUSE.",
            "cargo build --release",
            "THE --verbose FLAG IS LONG.",
        ] {
            assert!(
                text.contains(kept),
                "{}: {kept:?} in {text}",
                output.display()
            );
        }
    }
}

/// Translated in the smallest chunks (a cut wherever one may fall), a
/// package gives the same segments and the same output as whole; and
/// [`crate::translate`], batch by batch, gives the output of `merge`.
fn same_in_chunks(
    format: DocumentFormat,
    bytes: &[u8],
    doc: &crate::Extracted,
    translated: &[String],
    out: &[u8],
) {
    let package = crate::filter::of(format).package().unwrap();
    let (segments, skeleton) = crate::package::extract_in_chunks(package, bytes, None, 1).unwrap();
    assert_eq!(segments, doc.segments(), "{format:?}");
    let chunked = crate::filter::Skeleton::merge(&skeleton, &[], translated, None).unwrap();
    assert_eq!(entries(&chunked), entries(out), "{format:?}");

    let mut rest = translated;
    let mut batches = 0;
    let streamed = crate::translate::<()>(
        format,
        bytes,
        crate::ExtractOptions::default(),
        "EN",
        &mut |batch, _| {
            let (now, later) = rest.split_at(batch.len());
            rest = later;
            batches += 1;
            Ok(now.to_vec())
        },
    )
    .unwrap();
    assert!(rest.is_empty() && batches > 0);
    let whole = doc_with_language(format, bytes);
    let marked = whole.merge(translated).unwrap();
    assert_eq!(streamed.bytes, marked, "{format:?}");
    assert_eq!(streamed.notes, whole.notes(), "{format:?}");
}

/// `bytes` extracted again, its translations to be marked English.
fn doc_with_language(format: DocumentFormat, bytes: &[u8]) -> crate::Extracted {
    extract(format, bytes).unwrap().with_target_language("EN")
}

/// Converts `files` with LibreOffice headless into `out` as `to`.
pub(crate) fn soffice(dir: &Path, to: &str, out: &Path, files: &[PathBuf]) -> std::process::Output {
    let status = std::process::Command::new("soffice")
        .arg(format!(
            "-env:UserInstallation=file://{}",
            dir.join("lo-profile").display()
        ))
        .args(["--headless", "--convert-to", to, "--outdir"])
        .arg(out)
        .args(files)
        .output()
        .expect("LibreOffice (soffice) runs (scripts/setup.sh installs it for the tests)");
    assert!(
        status.status.success(),
        "soffice: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    status
}
