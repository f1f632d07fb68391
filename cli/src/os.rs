//! What the operating system offers the simulator: how many sweep sizes to run at once and how
//! much memory a payload run may take. The only module of the CLI that asks the system.

use std::num::NonZeroUsize;

/// Host threads for independent runs (a sweep's sizes): the host's parallelism.
pub(crate) fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

/// Memory the host can still give, in bytes (`MemAvailable` of `/proc/meminfo`); `None` where
/// the system does not say.
pub(crate) fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_mem_available(&text)
}

/// `MemAvailable:  123456 kB` -> bytes.
fn parse_mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// How many runs that each need `per_run` bytes may run at once within `available` bytes
/// (at most `threads`, at least one); `Err` with what to change when even one does not fit.
pub(crate) fn runs_that_fit(per_run: u64, available: Option<u64>, threads: usize) -> Result<usize, String> {
    let Some(avail) = available else { return Ok(threads.max(1)) };
    if per_run > avail {
        return Err(format!(
            "a payload run of this sweep needs about {} of memory (every rank's buffers), more than the {} \
             this host has available; add --no-data (timing-only: the same times, no payload bytes) or lower -e",
            human(per_run),
            human(avail)
        ));
    }
    // Half of what is free: the runs' own bookkeeping and the host keep the rest.
    let fit = (avail / 2).checked_div(per_run).unwrap_or(u64::MAX);
    Ok((fit.min(threads as u64) as usize).max(1))
}

/// `1.5 GiB`, `512 MiB`, `64 KiB`, `100 B`.
fn human(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["GiB", "MiB", "KiB", "B"];
    for (i, unit) in UNITS.iter().enumerate() {
        let scale = 1u64 << (10 * (3 - i));
        if bytes >= scale && scale > 1 {
            return format!("{:.1} {unit}", bytes as f64 / scale as f64);
        }
    }
    format!("{bytes} B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_available_is_read_in_bytes() {
        let text = "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   2048 kB\n";
        assert_eq!(parse_mem_available(text), Some(2048 * 1024));
        assert_eq!(parse_mem_available("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn runs_are_limited_by_half_the_free_memory_and_the_threads() {
        let gib = 1u64 << 30;
        assert_eq!(runs_that_fit(gib, Some(16 * gib), 4), Ok(4));
        assert_eq!(runs_that_fit(gib, Some(5 * gib), 4), Ok(2));
        assert_eq!(runs_that_fit(gib, Some(gib + 1), 4), Ok(1));
        assert_eq!(runs_that_fit(gib, None, 3), Ok(3));
        assert_eq!(runs_that_fit(0, Some(gib), 2), Ok(2));
        let e = runs_that_fit(3 * gib, Some(gib), 2).unwrap_err();
        assert!(e.contains("3.0 GiB") && e.contains("1.0 GiB") && e.contains("--no-data"), "{e}");
    }
}
