//! Peak memory of the filters: a counting global allocator
//! (installed by the bench binary) gives the highest number of heap bytes
//! live while one document is translated (its segments upper-cased, so every
//! paragraph is rewritten) and written, above what was live before. With the
//! file itself, that is what a worker holds for a document besides the
//! engines; the target is at most 4 × the file's size.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Result;
use tolk_formats::DocumentFormat;

use super::Format;

/// The system allocator, counting live bytes and their peak.
pub struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; the
// counters are only arithmetic on the sizes it was asked for.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is the system allocator's.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract is the system allocator's.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            let live = LIVE.fetch_add(new_size, Ordering::Relaxed) + new_size;
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        new
    }
}

/// Heap bytes that became live, at most, while `f` ran.
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed).saturating_sub(before))
}

/// Upper-cases a batch of segments (every paragraph is rewritten).
fn upper(segments: &[String]) -> Vec<String> {
    segments
        .iter()
        .map(|s| tolk_formats::inline::map_text(s, str::to_uppercase))
        .collect()
}

/// How the worker reads a document: with the fonts a PDF is set in (read
/// once, before any measure).
fn options() -> tolk_formats::ExtractOptions {
    static FONTS: std::sync::OnceLock<tolk_formats::Fonts> = std::sync::OnceLock::new();
    tolk_formats::ExtractOptions {
        fonts: Some(
            FONTS
                .get_or_init(|| tolk_worker::PdfFonts::default().get())
                .clone(),
        ),
        ..Default::default()
    }
}

/// Translates `file` as the worker does, batch by batch
/// (`tolk_formats::translate`); the output size.
fn streamed(format: DocumentFormat, file: &[u8]) -> Result<usize> {
    let mut translator =
        |segments: &[String], _: f32| Ok::<_, std::convert::Infallible>(upper(segments));
    let out = tolk_formats::translate(format, file, options(), "ES", &mut translator)?;
    Ok(out.bytes.len())
}

/// Extracts the whole of `file`, then merges it (the filters' other
/// interface, which holds every segment and translation at once); the
/// output size.
fn whole(format: DocumentFormat, file: &[u8]) -> Result<usize> {
    let doc = tolk_formats::extract_with(format, file, options())?.with_target_language("ES");
    Ok(doc.merge(&upper(doc.segments()))?.len())
}

/// The total uncompressed size of a package's entries (a file that is not
/// a package: its size).
fn unpacked_size(file: &[u8]) -> Result<usize> {
    if !file.starts_with(b"PK") {
        return Ok(file.len().max(1));
    }
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(file))?;
    let mut total = 0;
    for i in 0..archive.len() {
        total += usize::try_from(archive.by_index_raw(i)?.size())?;
    }
    Ok(total.max(1))
}

/// How many times the benchmark's text is repeated in the files measured:
/// the largest is a few MiB, as large documents are, so that what a
/// translation holds whatever the size (a chunk, the compressor's state)
/// does not hide what grows with the file.
const REPEATS: [usize; 3] = [1, 8, 32];

/// Prints the filter's peak memory for files holding all `paragraphs`, then
/// 8 and 32 times over: what the worker holds for the document (the file
/// itself, plus the most heap bytes live at once while it is translated
/// batch by batch and written) against the file's size, beside the same for
/// a whole-document extract and merge. Text formats a legacy file of which
/// is read as windows-1252 are measured in it too (a "café" in every
/// paragraph), as such files are cut and transcoded piece by piece.
pub fn report(format: Format, paragraphs: &[String]) -> Result<()> {
    let kind = DocumentFormat::from_extension(format.extension())
        .ok_or_else(|| anyhow::anyhow!("no filter for {}", format.extension()))?;
    if format == Format::Pdf {
        return pdf_report(paragraphs);
    }
    let utf8 = table(
        kind,
        REPEATS.map(|repeat| format.build(&repeated(paragraphs, repeat))),
    )?;
    let mut largest = utf8;
    if format.read_as_windows_1252() {
        println!();
        println!("In windows-1252:");
        let legacy: Vec<String> = paragraphs.iter().map(|p| format!("{p} Café.")).collect();
        let files = REPEATS.map(|repeat| {
            let file = format.build(&repeated(&legacy, repeat))?;
            let text = String::from_utf8(file)?;
            Ok(encoding_rs::WINDOWS_1252.encode(&text).0.into_owned())
        });
        largest = largest.max(table(kind, files)?);
    }
    println!(
        "target: peak worker memory ≤ 4 × the largest file: {largest:.1} × → {}",
        if largest <= 4.0 { "PASS" } else { "MISS" }
    );
    Ok(())
}

/// The pages of a PDF the benchmark measures the memory of.
const PDF_PAGES: usize = 300;
/// The most a worker may hold for it.
const PDF_TARGET_MB: f64 = 300.0;

/// Prints the peak memory of a [`PDF_PAGES`]-page PDF (the benchmark's
/// text, repeated as needed) translated batch by batch and written.
fn pdf_report(paragraphs: &[String]) -> Result<()> {
    let pages =
        |file: &[u8]| -> Result<usize> { Ok(lopdf::Document::load_mem(file)?.get_pages().len()) };
    let once = Format::Pdf.build(paragraphs)?;
    let repeat = PDF_PAGES.div_ceil(pages(&once)?.max(1)).max(1);
    let mut text = repeated(paragraphs, repeat);
    let mut file = Format::Pdf.build(&text)?;
    while pages(&file)? > PDF_PAGES && text.len() > 1 {
        text.truncate(text.len() * PDF_PAGES / pages(&file)?.max(1));
        file = Format::Pdf.build(&text)?;
    }
    options();
    let (out, peak) = peak_during(|| streamed(DocumentFormat::Pdf, &file));
    out?;
    let held = (file.len() + peak) as f64 / (1 << 20) as f64;
    println!();
    println!("| PDF pages | file | worker holds, translating and writing it |");
    println!("|---|---|---|");
    println!(
        "| {} | {} KiB | {held:.1} MiB |",
        pages(&file)?,
        file.len() / 1024
    );
    println!(
        "target: peak worker memory for a {PDF_PAGES}-page PDF ≤ {PDF_TARGET_MB} MB: {held:.1} MiB → {}",
        if held * 1.048_576 <= PDF_TARGET_MB {
            "PASS"
        } else {
            "MISS"
        }
    );
    Ok(())
}

/// `paragraphs`, `repeat` times over.
fn repeated(paragraphs: &[String], repeat: usize) -> Vec<String> {
    (0..repeat)
        .flat_map(|_| paragraphs.iter().cloned())
        .collect()
}

/// Prints a table row of what the worker holds for each of `files`; the
/// ratio of the last (the largest).
fn table(kind: DocumentFormat, files: impl IntoIterator<Item = Result<Vec<u8>>>) -> Result<f64> {
    println!();
    println!(
        "| file (unpacked) | worker holds, batch by batch | × the file | whole extract + merge | × the file |"
    );
    println!("|---|---|---|---|---|");
    let mut largest = 0.0;
    for file in files {
        let file = file?;
        let (out, peak) = peak_during(|| streamed(kind, &file));
        out?;
        let (out, peak_whole) = peak_during(|| whole(kind, &file));
        out?;
        let held = file.len() + peak;
        let held_whole = file.len() + peak_whole;
        let ratio = held as f64 / file.len() as f64;
        println!(
            "| {} KiB ({} KiB) | {} KiB | {ratio:.1} × | {} KiB | {:.1} × |",
            file.len() / 1024,
            unpacked_size(&file)? / 1024,
            held / 1024,
            held_whole / 1024,
            held_whole as f64 / file.len() as f64,
        );
        largest = ratio;
    }
    Ok(largest)
}
