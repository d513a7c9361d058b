//! Publishing formats end to end beyond the table's rows: RTF through
//! LibreOffice (InDesign, FrameMaker, DITA and SCORM are rows of
//! [`super::table`]).

use super::*;
use crate::support::libreoffice;

/// An RTF file LibreOffice wrote from a Word file (runs, a hyperlink, a
/// table, a header, Cyrillic and Greek text) comes back in Spanish, read by
/// LibreOffice; the text in other scripts is written back in their code
/// pages or as Unicode escapes and read as it was.
#[tokio::test]
async fn rtf_from_libreoffice_is_translated_and_libreoffice_reads_it() -> Result<()> {
    let (world, api, key) = platform("rtf").await?;
    let docx = world.path("scripts.docx");
    testdata_script("make_rtf_source.py", &[&docx]).await?;
    let rtf = libreoffice(&world, &docx, "rtf").await?;
    let (content_type, bytes) = translated(
        &api,
        &key,
        "scripts.rtf",
        std::fs::read(rtf)?,
        &[("target_lang", "ES"), ("source_lang", "EN")],
    )
    .await?;
    assert_eq!(content_type, "application/rtf");
    let result = world.path("result.rtf");
    std::fs::write(&result, &bytes)?;
    let text = std::fs::read_to_string(libreoffice(&world, &result, "txt:Text").await?)?;
    for expected in ["casa", "agua", "Привет, мир", "Καλημέρα", "crème brûlée"]
    {
        assert!(text.contains(expected), "{expected:?} in {text}");
    }
    assert!(!text.contains("The house is big"), "{text}");
    Ok(())
}
