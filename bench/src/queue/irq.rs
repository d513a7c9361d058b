//! Which CPU serves the storage's interrupts, for `--kinds`' placement of its
//! pools.
//!
//! The database flushes its WAL through the machine's disk, whose completion
//! interrupts the kernel delivers to one CPU. On a small VM a CPU kept busy,
//! even by work in the idle scheduling class, delays those completions: on a
//! 2-vCPU Firecracker VM a spinning thread on the disk's CPU took the p99 of
//! `fdatasync` from 0.6 to 6 ms, and nothing when it spun on the other CPU.
//! A deployment runs the database on a machine of its own, so the bench keeps
//! its CPU-heavy pool off the CPU that serves the disk.

use anyhow::{Context, Result};
use sqlx::PgPool;

/// Device interrupts each CPU has served so far (the numbered lines of
/// `/proc/interrupts`; the per-CPU timer and IPI lines are left out).
fn device_interrupts() -> Result<Vec<u64>> {
    let text = std::fs::read_to_string("/proc/interrupts").context("/proc/interrupts")?;
    Ok(parse(&text))
}

fn parse(text: &str) -> Vec<u64> {
    let mut lines = text.lines();
    let cpus = lines.next().map_or(0, |h| h.split_whitespace().count());
    let mut served = vec![0u64; cpus];
    for line in lines {
        let mut fields = line.split_whitespace();
        let Some(label) = fields.next() else { continue };
        let label = label.trim_end_matches(':');
        if label.is_empty() || !label.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        for (cpu, field) in fields.take(cpus).enumerate() {
            if let Ok(n) = field.parse::<u64>() {
                served[cpu] += n;
            }
        }
    }
    served
}

/// The device interrupts each CPU served while the database flushed
/// `commits` transactions on `pool` (one row each into a table of its own,
/// dropped after: a commit that wrote nothing waits for no flush).
pub(super) async fn during_commits(pool: &PgPool, commits: usize) -> Result<Vec<u64>> {
    sqlx::query("CREATE TABLE IF NOT EXISTS bench_irq_probe (n int)")
        .execute(pool)
        .await
        .context("probe table")?;
    let before = device_interrupts()?;
    for _ in 0..commits {
        sqlx::query("INSERT INTO bench_irq_probe VALUES (1)")
            .execute(pool)
            .await
            .context("probe commit")?;
    }
    let after = device_interrupts()?;
    sqlx::query("DROP TABLE bench_irq_probe")
        .execute(pool)
        .await
        .context("probe table")?;
    Ok(after
        .iter()
        .zip(&before)
        .map(|(a, b)| a.saturating_sub(*b))
        .collect())
}

/// The CPU that served more than half of `served`, if at least `least`
/// arrived in all; `None` when none did or too few arrived to tell (a
/// database on another machine, a disk polled rather than interrupting).
pub(super) fn busiest(served: &[u64], least: u64) -> Option<usize> {
    let total: u64 = served.iter().sum();
    let (cpu, &most) = served.iter().enumerate().max_by_key(|(_, n)| **n)?;
    (total >= least.max(1) && most * 2 > total).then_some(cpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "           CPU0       CPU1
  4:          0        863   IO-APIC    4-edge      ttyS0
 36:         10     855391  PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0
NMI:          0          0   Non-maskable interrupts
LOC:    1234567    7654321   Local timer interrupts
";

    #[test]
    fn only_device_lines_count() {
        assert_eq!(parse(SAMPLE), vec![10, 856_254]);
    }

    #[test]
    fn the_cpu_that_served_most_is_chosen_only_when_it_is_clear() {
        assert_eq!(busiest(&[2, 200], 50), Some(1));
        // Too few to tell, or shared evenly.
        assert_eq!(busiest(&[2, 10], 50), None);
        assert_eq!(busiest(&[100, 100], 50), None);
    }
}
