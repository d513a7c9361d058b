//! Peak memory of the office filters for one file: a counting global
//! allocator (installed by the bench binary) gives the highest number of
//! heap bytes live while one document is extracted, translated (its
//! segments upper-cased, so every paragraph is rewritten) and merged, above
//! what was live before. That is what a worker holds for a document besides
//! the engines; the target is at most 4 × the file's size.

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

/// Extracts, upper-cases and merges `file`; the output size.
fn round_trip(format: DocumentFormat, file: &[u8]) -> Result<usize> {
    let doc = tolk_formats::extract(format, file)?.with_target_language("ES");
    let translated: Vec<String> = doc
        .segments()
        .iter()
        .map(|s| tolk_formats::inline::map_text(s, str::to_uppercase))
        .collect();
    Ok(doc.merge(&translated)?.len())
}

/// The total uncompressed size of a package's entries.
fn unpacked_size(file: &[u8]) -> Result<usize> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(file))?;
    let mut total = 0;
    for i in 0..archive.len() {
        total += usize::try_from(archive.by_index_raw(i)?.size())?;
    }
    Ok(total.max(1))
}

/// Prints the filter's peak memory for one file holding all `paragraphs`
/// (a large file, so that the compressor's fixed state does not dominate).
pub fn report(format: Format, paragraphs: &[String]) -> Result<()> {
    let file = format.build(paragraphs)?;
    let largest = &file;
    let kind = DocumentFormat::from_extension(format.extension())
        .ok_or_else(|| anyhow::anyhow!("no filter for {}", format.extension()))?;
    let (out, peak) = peak_during(|| round_trip(kind, largest));
    out?;
    let unpacked = unpacked_size(largest)?;
    let ratio = peak as f64 / largest.len() as f64;
    println!(
        "filter peak memory for one file of all the text ({} KiB, {} KiB unpacked): {} KiB = {ratio:.1} × the file, {:.1} × its unpacked content (target ≤ 4 × the file) → {}",
        largest.len() / 1024,
        unpacked / 1024,
        peak / 1024,
        peak as f64 / unpacked as f64,
        if ratio <= 4.0 { "PASS" } else { "MISS" }
    );
    Ok(())
}
