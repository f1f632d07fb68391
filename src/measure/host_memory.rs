//! What the host's memory allows a measurement: what the host has available, and the limit a
//! run keeps to with where it comes from.

/// Memory the host can still give, in bytes (`MemAvailable` of `/proc/meminfo`); `None`
/// where the system does not say.
pub fn available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_mem_available(&text)
}

/// `MemAvailable:  123456 kB` -> bytes.
fn parse_mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// A memory limit, and where it comes from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MemoryLimit {
    /// Given by the user (`--max-memory`, `max_memory=`, [`Budgets::max_memory`](super::Budgets::max_memory)).
    Given(u64),
    /// What the host had available when it was read ([`available`]).
    Available(u64),
    /// The share of [`MemoryLimit::Available`] a sweep's default series keeps to (half): a
    /// default run leaves the host room for its other processes and for the estimate's error.
    DefaultRun(u64),
}

impl MemoryLimit {
    /// What the host has available now, if it says.
    pub fn host() -> Option<MemoryLimit> {
        available().map(MemoryLimit::Available)
    }

    /// The limit in bytes.
    pub fn bytes(self) -> u64 {
        match self {
            MemoryLimit::Given(b) | MemoryLimit::Available(b) | MemoryLimit::DefaultRun(b) => b,
        }
    }

    /// Where it comes from, as a refusal says it.
    pub fn source(self) -> &'static str {
        match self {
            MemoryLimit::Given(_) => "the limit given with --max-memory or max_memory=",
            MemoryLimit::Available(_) => "what this host has available, MemAvailable; --max-memory sets a limit",
            MemoryLimit::DefaultRun(_) => {
                "half of what this host has available, which a default series keeps to; -e asks for larger \
                 sizes, --max-memory sets a limit"
            }
        }
    }

    /// The limit a default series (no `-e`) fits its sizes in: half of what the host has,
    /// the whole of a given limit.
    pub fn for_default_run(self) -> MemoryLimit {
        match self {
            MemoryLimit::Available(b) => MemoryLimit::DefaultRun(b / 2),
            l => l,
        }
    }
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
}
