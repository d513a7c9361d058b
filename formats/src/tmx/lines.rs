//! A [`BufRead`] wrapper that knows the line of any recent byte position, so
//! a parse error can name its line without keeping the file in memory.

use std::collections::VecDeque;
use std::io::{BufRead, Read};

/// Counts the newlines of everything consumed through it.
///
/// Newlines before the last [`LineCounter::forget_before`] mark are only
/// counted; those after it are remembered by position (at most one event's
/// worth), so [`LineCounter::line_at`] answers for any position at or after
/// the mark.
pub(crate) struct LineCounter<R> {
    inner: R,
    consumed: u64,
    lines_before_mark: u64,
    pending: VecDeque<u64>,
}

impl<R> LineCounter<R> {
    pub(crate) fn new(inner: R) -> Self {
        Self {
            inner,
            consumed: 0,
            lines_before_mark: 0,
            pending: VecDeque::new(),
        }
    }

    /// Positions before `pos` will not be asked about any more.
    pub(crate) fn forget_before(&mut self, pos: u64) {
        while self.pending.front().is_some_and(|&p| p < pos) {
            self.pending.pop_front();
            self.lines_before_mark += 1;
        }
    }

    /// The 1-based line of byte `pos` (at or after the last mark).
    pub(crate) fn line_at(&self, pos: u64) -> u64 {
        let within = self.pending.iter().take_while(|&&p| p < pos).count() as u64;
        self.lines_before_mark + within + 1
    }
}

impl<R: Read> Read for LineCounter<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let start = self.consumed;
        for (i, b) in buf[..n].iter().enumerate() {
            if *b == b'\n' {
                self.pending.push_back(start + i as u64);
            }
        }
        self.consumed += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for LineCounter<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        if amt > 0
            && let Ok(buf) = self.inner.fill_buf()
        {
            let start = self.consumed;
            for (i, b) in buf[..amt.min(buf.len())].iter().enumerate() {
                if *b == b'\n' {
                    self.pending.push_back(start + i as u64);
                }
            }
        }
        self.consumed += amt as u64;
        self.inner.consume(amt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_positions() {
        let mut c = LineCounter::new(&b"a\nbb\n\nccc\nd"[..]);
        let mut all = Vec::new();
        loop {
            let n = {
                let buf = c.fill_buf().unwrap_or_default();
                all.extend_from_slice(buf);
                buf.len()
            };
            if n == 0 {
                break;
            }
            c.consume(n);
        }
        assert_eq!(c.line_at(0), 1);
        assert_eq!(c.line_at(2), 2);
        assert_eq!(c.line_at(5), 3);
        c.forget_before(6);
        assert_eq!(c.line_at(6), 4);
        assert_eq!(c.line_at(10), 5);
    }
}
