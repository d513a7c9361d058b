//! Batches of segments for the engines: large enough to batch, small enough
//! to report progress and to keep a few in flight.

/// Segments per engine call at most.
pub const CHUNK_SEGMENTS: usize = 200;
/// Characters (UTF-8 bytes) per engine call at most, unless one segment is larger.
pub const CHUNK_CHARS: usize = 40_000;
/// Chunks of one translation in flight at once.
pub const CHUNKS_IN_FLIGHT: usize = 2;

/// Cuts `segments` into chunks in order, each within both bounds (a segment
/// larger than [`CHUNK_CHARS`] is a chunk of its own).
pub fn chunk(segments: Vec<String>) -> Vec<Vec<String>> {
    let mut chunks = Vec::new();
    let mut current = Vec::new();
    let mut chars = 0;
    for s in segments {
        if !current.is_empty() && (current.len() >= CHUNK_SEGMENTS || chars + s.len() > CHUNK_CHARS)
        {
            chunks.push(std::mem::take(&mut current));
            chars = 0;
        }
        chars += s.len();
        current.push(s);
    }
    if !current.is_empty() {
        chunks.push(current);
    }
    chunks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_keep_order_and_bounds() {
        let segs: Vec<String> = (0..450).map(|i| format!("segment {i}")).collect();
        let chunks = chunk(segs.clone());
        assert_eq!(chunks.len(), 3);
        assert!(chunks.iter().all(|c| c.len() <= CHUNK_SEGMENTS));
        assert_eq!(chunks.concat(), segs);
        let big = vec!["x".repeat(CHUNK_CHARS); 3];
        assert_eq!(chunk(big).len(), 3);
    }

    #[test]
    fn nothing_makes_no_chunk() {
        assert!(chunk(Vec::new()).is_empty());
    }
}
