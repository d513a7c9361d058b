//! Translating a document batch by batch, so that what a worker holds does
//! not grow with the document: [`translate`] hands the segments to a
//! translator a batch at a time and writes each batch back as it returns.
//!
//! Office Open XML and OpenDocument packages are read, translated and
//! written a part at a time and, within a part, a chunk of about 128 KiB of
//! XML at a time: besides its input, a translation holds its output (about
//! the input's size) and one chunk. Other formats are one batch (their
//! files are text, read whole by their filters).

use crate::{DocumentFormat, ExtractOptions, FormatError, bcp47, extract_with, inline, ooxml};

/// What [`translate`] hands each batch to: the batch's segments and the
/// share (0 to 1) of the document read so far; it gives one translation per
/// segment back.
pub type Translator<'t, E> = dyn FnMut(&[String], f32) -> Result<Vec<String>, E> + 't;

/// Why [`translate`] stopped.
#[derive(Debug, thiserror::Error)]
pub enum TranslateError<E> {
    /// The document could not be read or written.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// The translator failed; the document is not finished.
    #[error("the translator failed")]
    Translator(E),
}

/// Translates the document `input` of `format` into `target_lang` (a DeepL
/// code, marked on translated text where the format records a language).
///
/// `translator` gets the segments of each batch in document order, in
/// [`inline`] markup, with the share (0 to 1) of the document read so far,
/// and returns one translation per segment. The output is what
/// [`Extracted::merge`](crate::Extracted::merge) gives for the same
/// translations.
pub fn translate<E>(
    format: DocumentFormat,
    input: &[u8],
    options: ExtractOptions,
    target_lang: &str,
    translator: &mut Translator<'_, E>,
) -> Result<Vec<u8>, TranslateError<E>> {
    let lang = bcp47(target_lang);
    if let Some(package) = crate::package(format) {
        let source = options.source_language.as_deref();
        return match ooxml::translate(
            package,
            input,
            source,
            Some(&lang),
            ooxml::CHUNK_SIZE,
            true,
            translator,
        ) {
            Ok(out) => Ok(out.unwrap_or_default()),
            Err(ooxml::Stop::Format(e)) => Err(e.into()),
            Err(ooxml::Stop::Translator(e)) => Err(TranslateError::Translator(e)),
        };
    }
    let options = ExtractOptions {
        target_language: options
            .target_language
            .or_else(|| Some(target_lang.to_owned())),
        ..options
    };
    let doc = extract_with(format, input, options)?.with_target_language(target_lang);
    let translated = if doc.segments().is_empty() {
        Vec::new()
    } else {
        translator(doc.segments(), 1.0).map_err(TranslateError::Translator)?
    };
    Ok(doc.merge(&translated)?)
}

/// The plain text of the document's first segments, one per line, until it
/// holds at least `chars` bytes (or the document ends): a sample for
/// language detection, read without holding the whole document where the
/// format allows.
pub fn sample(
    format: DocumentFormat,
    input: &[u8],
    options: ExtractOptions,
    chars: usize,
) -> Result<String, FormatError> {
    let mut text = String::new();
    let mut add = |segments: &[String]| {
        for segment in segments {
            if text.len() >= chars {
                return false;
            }
            text.push_str(&inline::plain_text(segment));
            text.push('\n');
        }
        text.len() < chars
    };
    if let Some(package) = crate::package(format) {
        /// Enough text was read.
        struct Enough;
        let source = options.source_language.as_deref();
        let mut collect = |segments: &[String], _: f32| {
            if add(segments) {
                Ok(Vec::new())
            } else {
                Err(Enough)
            }
        };
        match ooxml::translate(
            package,
            input,
            source,
            None,
            ooxml::CHUNK_SIZE,
            false,
            &mut collect,
        ) {
            Ok(_) | Err(ooxml::Stop::Translator(Enough)) => {}
            Err(ooxml::Stop::Format(e)) => return Err(e),
        }
    } else {
        add(extract_with(format, input, options)?.segments());
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_formats_are_one_batch_and_merge_as_extract_does() {
        let input = b"Hello\n\nWorld\n";
        let mut batches = Vec::new();
        let out = translate::<()>(
            DocumentFormat::Txt,
            input,
            ExtractOptions::default(),
            "DE",
            &mut |segments, done| {
                batches.push((segments.to_vec(), done));
                Ok(segments.iter().map(|s| s.to_uppercase()).collect())
            },
        )
        .unwrap();
        assert_eq!(out, b"HELLO\n\nWORLD\n");
        assert_eq!(batches, [(vec!["Hello".into(), "World".into()], 1.0)]);
    }

    #[test]
    fn a_translator_failure_stops_the_translation() {
        let failed = translate(
            DocumentFormat::Txt,
            b"Hello\n",
            ExtractOptions::default(),
            "DE",
            &mut |_, _| Err("engine down"),
        );
        assert!(matches!(
            failed,
            Err(TranslateError::Translator("engine down"))
        ));
    }

    #[test]
    fn the_sample_stops_at_its_size() {
        let input = "One.\n\nTwo.\n\nThree.\n";
        let text = sample(
            DocumentFormat::Txt,
            input.as_bytes(),
            ExtractOptions::default(),
            8,
        )
        .unwrap();
        assert_eq!(text, "One.\nTwo.\n");
    }
}
