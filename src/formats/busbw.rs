//! nccl-tests' bandwidth and size conventions (`doc/PERFORMANCE.md` and each test's `GetBw` /
//! `GetCollByteCount`), so a ranksim table reads like a real nccl-tests table.

/// The collective being reported; the same enum the `collectives` crate runs.
pub use collectives::Kind as CollKind;

/// The bus-bandwidth factor: `busbw = algbw * factor`, which makes the number comparable to a
/// link's peak independently of the rank count.
///
/// AllReduce `2(n-1)/n`; AllGather, ReduceScatter, AllToAll (and AllToAllV, reported like
/// AllToAll) `(n-1)/n`; Broadcast `1`; Barrier `0` (it moves no payload). `nranks == 0` gives 0.
pub fn bus_factor(kind: CollKind, nranks: usize) -> f64 {
    if nranks == 0 {
        return 0.0;
    }
    let n = nranks as f64;
    match kind {
        CollKind::AllReduce => 2.0 * (n - 1.0) / n,
        CollKind::AllGather | CollKind::ReduceScatter | CollKind::AllToAll | CollKind::AllToAllV => (n - 1.0) / n,
        CollKind::Broadcast => 1.0,
        CollKind::Barrier => 0.0,
    }
}

/// Algorithm bandwidth in GB/s (GB = 1e9 bytes): `bytes / time`, where `bytes` is the size
/// column `S` (see [`bytes_for`]). A time that is not a positive finite number gives 0 rather
/// than an infinity that would break the table and JSON.
pub fn algbw_gbps(bytes: u64, time_us: f64) -> f64 {
    if !(time_us.is_finite() && time_us > 0.0) {
        return 0.0;
    }
    bytes as f64 / 1.0e9 / (time_us / 1.0e6)
}

/// Bus bandwidth in GB/s: [`algbw_gbps`] times [`bus_factor`].
pub fn busbw_gbps(kind: CollKind, bytes: u64, time_us: f64, nranks: usize) -> f64 {
    algbw_gbps(bytes, time_us) * bus_factor(kind, nranks)
}

/// The `count` column for a requested size of `size_bytes`, as nccl-tests computes it.
///
/// `count = size_bytes / typesize` elements; AllReduce and Broadcast report that count.
/// AllGather, ReduceScatter and AllToAll(V) report the per-rank (per-peer) chunk
/// `count / nranks`, rounded down to a multiple of 16 bytes (nccl-tests aligns chunks for
/// vector loads; applied when `typesize` is a power of two up to 16). Barrier has no payload:
/// 0. `typesize == 0` or `nranks == 0` gives 0.
pub fn count_for(kind: CollKind, size_bytes: u64, typesize: u64, nranks: usize) -> u64 {
    if typesize == 0 || nranks == 0 {
        return 0;
    }
    let count = size_bytes / typesize;
    match kind {
        CollKind::AllReduce | CollKind::Broadcast => count,
        CollKind::AllGather | CollKind::ReduceScatter | CollKind::AllToAll | CollKind::AllToAllV => {
            align_16_bytes(count / nranks as u64, typesize)
        }
        CollKind::Barrier => 0,
    }
}

/// The `size` column `S` in bytes for a `count` as [`count_for`] reports it.
///
/// AllReduce and Broadcast `count * typesize`; AllGather and ReduceScatter
/// `count * typesize * nranks` (the gathered / scattered buffer); AllToAll(V)
/// `count * nranks * typesize` (the whole send buffer); Barrier 0. Saturates instead of
/// overflowing.
pub fn bytes_for(kind: CollKind, count: u64, typesize: u64, nranks: usize) -> u64 {
    let per_rank = count.saturating_mul(typesize);
    match kind {
        CollKind::AllReduce | CollKind::Broadcast => per_rank,
        CollKind::AllGather | CollKind::ReduceScatter | CollKind::AllToAll | CollKind::AllToAllV => {
            per_rank.saturating_mul(nranks as u64)
        }
        CollKind::Barrier => 0,
    }
}

/// The `Avg bus bandwidth` of the footer: the mean of the rows' busbw (0 with no rows).
pub fn average_busbw(busbw: &[f64]) -> f64 {
    if busbw.is_empty() { 0.0 } else { busbw.iter().sum::<f64>() / busbw.len() as f64 }
}

/// Rounds an element count down so that it spans a multiple of 16 bytes.
fn align_16_bytes(elems: u64, typesize: u64) -> u64 {
    if typesize.is_power_of_two() && typesize <= 16 { elems & !(16 / typesize - 1) } else { elems }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn bus_factors_at_8_ranks() {
        assert_eq!(bus_factor(CollKind::AllReduce, 8), 1.75);
        assert_eq!(bus_factor(CollKind::AllGather, 8), 0.875);
        assert_eq!(bus_factor(CollKind::ReduceScatter, 8), 0.875);
        assert_eq!(bus_factor(CollKind::AllToAll, 8), 0.875);
        assert_eq!(bus_factor(CollKind::AllToAllV, 8), 0.875);
        assert_eq!(bus_factor(CollKind::Broadcast, 8), 1.0);
        assert_eq!(bus_factor(CollKind::Barrier, 8), 0.0);
    }

    #[test]
    fn bus_factor_edge_rank_counts() {
        assert_eq!(bus_factor(CollKind::AllReduce, 1), 0.0);
        assert_eq!(bus_factor(CollKind::AllReduce, 2), 1.0);
        assert_eq!(bus_factor(CollKind::AllGather, 4), 0.75);
        assert_eq!(bus_factor(CollKind::AllReduce, 0), 0.0);
    }

    #[test]
    fn algbw_and_busbw_arithmetic() {
        // 1 GB in 1 s: 1 GB/s.
        assert_eq!(algbw_gbps(1_000_000_000, 1.0e6), 1.0);
        // 64 MiB in 1000 us: 67.108864 GB/s.
        assert!(close(algbw_gbps(64 << 20, 1000.0), 67.108864));
        assert!(close(busbw_gbps(CollKind::AllReduce, 64 << 20, 1000.0, 8), 67.108864 * 1.75));
        assert!(close(busbw_gbps(CollKind::AllGather, 1 << 20, 1234.5678, 8), 0.7431783009406207));
        assert_eq!(busbw_gbps(CollKind::Barrier, 0, 5.0, 8), 0.0);
        assert_eq!(algbw_gbps(4096, 0.0), 0.0);
        assert_eq!(algbw_gbps(4096, f64::NAN), 0.0);
        assert_eq!(algbw_gbps(4096, -1.0), 0.0);
    }

    #[test]
    fn counts_and_sizes_follow_nccl_tests() {
        // AllReduce / Broadcast: the full buffer.
        assert_eq!(count_for(CollKind::AllReduce, 4096, 4, 8), 1024);
        assert_eq!(bytes_for(CollKind::AllReduce, 1024, 4, 8), 4096);
        assert_eq!(count_for(CollKind::Broadcast, 4098, 4, 8), 1024);
        assert_eq!(bytes_for(CollKind::Broadcast, 1024, 4, 8), 4096);
        // AllGather / ReduceScatter: count per rank, S = count * typesize * nranks.
        assert_eq!(count_for(CollKind::AllGather, 1 << 20, 4, 8), 32768);
        assert_eq!(bytes_for(CollKind::AllGather, 32768, 4, 8), 1 << 20);
        assert_eq!(count_for(CollKind::ReduceScatter, 1 << 20, 2, 8), 65536);
        assert_eq!(bytes_for(CollKind::ReduceScatter, 65536, 2, 8), 1 << 20);
        // AllToAll(V): per-peer chunk, S = count * nranks * typesize.
        assert_eq!(count_for(CollKind::AllToAll, 1 << 20, 4, 8), 32768);
        assert_eq!(bytes_for(CollKind::AllToAllV, 32768, 4, 8), 1 << 20);
        // 16-byte chunk alignment: 1000 B of f32 over 8 ranks = 31 elements -> 28.
        assert_eq!(count_for(CollKind::AllGather, 1000, 4, 8), 28);
        assert_eq!(bytes_for(CollKind::AllGather, 28, 4, 8), 896);
        assert_eq!(count_for(CollKind::AllGather, 64, 4, 8), 0);
        // No alignment for odd element sizes.
        assert_eq!(count_for(CollKind::AllGather, 93, 3, 4), 7);
        // Barrier and degenerate inputs.
        assert_eq!(count_for(CollKind::Barrier, 4096, 4, 8), 0);
        assert_eq!(bytes_for(CollKind::Barrier, 1024, 4, 8), 0);
        assert_eq!(count_for(CollKind::AllReduce, 4096, 0, 8), 0);
        assert_eq!(count_for(CollKind::AllGather, 4096, 4, 0), 0);
        assert_eq!(bytes_for(CollKind::AllGather, u64::MAX, 4, 8), u64::MAX);
    }

    #[test]
    fn average_of_rows() {
        assert_eq!(average_busbw(&[]), 0.0);
        assert_eq!(average_busbw(&[1.0, 2.0, 4.5]), 2.5);
    }
}
