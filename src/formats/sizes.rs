//! Message sizes: parsing `64M`-style arguments and the nccl-tests `-b -e -f` size list.

/// The longest size list [`sweep_sizes`] builds; a factor barely above 1 would otherwise ask
/// for billions of sizes.
pub const MAX_SWEEP_POINTS: usize = 4096;

const KIB: u64 = 1024;

/// Parses a byte count: plain digits, or digits followed by a binary suffix `K`, `M` or `G`
/// (1024-based, case-insensitive, optionally spelt `KB` / `KiB`), and an optional lone `B`.
///
/// `"64M"`, `"64 MiB"`, `"1kb"` and `"4096"` are accepted; errors quote the offending text.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let text = s.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (digits, suffix) = text.split_at(split);
    if digits.is_empty() {
        return Err(format!("invalid size `{s}`: expected a number of bytes such as 4096, 64K, 16M or 1G"));
    }
    let multiplier = suffix_multiplier(suffix.trim())
        .ok_or_else(|| format!("invalid size `{s}`: unknown unit `{}` (expected K, M or G)", suffix.trim()))?;
    let value: u64 = digits.parse().map_err(|_| format!("invalid size `{s}`: number too large"))?;
    value.checked_mul(multiplier).ok_or_else(|| format!("invalid size `{s}`: overflows 64 bits"))
}

/// The multiplier of a unit suffix (`""`, `B`, `K`, `KB`, `KiB`, ...), or `None` if unknown.
fn suffix_multiplier(suffix: &str) -> Option<u64> {
    let lower = suffix.to_ascii_lowercase();
    let unit = lower.strip_suffix("ib").or_else(|| lower.strip_suffix('b')).unwrap_or(&lower);
    match unit {
        "" if !lower.ends_with("ib") => Some(1),
        "k" => Some(KIB),
        "m" => Some(KIB * KIB),
        "g" => Some(KIB * KIB * KIB),
        _ => None,
    }
}

/// The sizes of a sweep, like nccl-tests `-b min -e max -f factor`: `min`, `min*f`, `min*f^2`,
/// ... while `<= max`.
///
/// Each step multiplies the previous size and rounds down (exact for integer factors, as in
/// nccl-tests); a step that would not grow moves up by one byte instead. Errors: `min == 0`,
/// `min > max`, a factor that is not finite and `> 1` (unless `min == max`), or more than
/// [`MAX_SWEEP_POINTS`] sizes.
pub fn sweep_sizes(min: u64, max: u64, factor: f64) -> Result<Vec<u64>, String> {
    if min == 0 {
        return Err("invalid sweep: minimum size must be at least 1 byte".to_string());
    }
    if min > max {
        return Err(format!("invalid sweep: minimum size {min} exceeds maximum size {max}"));
    }
    if min == max {
        return Ok(vec![min]);
    }
    if !(factor.is_finite() && factor > 1.0) {
        return Err(format!("invalid sweep: step factor {factor} must be greater than 1"));
    }
    let mut sizes = vec![min];
    let mut cur = min;
    while let Some(next) = next_size(cur, max, factor) {
        if sizes.len() == MAX_SWEEP_POINTS {
            return Err(format!(
                "invalid sweep: factor {factor} from {min} to {max} gives over {MAX_SWEEP_POINTS} sizes"
            ));
        }
        sizes.push(next);
        cur = next;
    }
    Ok(sizes)
}

/// The size after `cur`, or `None` once it would pass `max`.
fn next_size(cur: u64, max: u64, factor: f64) -> Option<u64> {
    let scaled = (cur as f64 * factor).floor();
    if scaled > max as f64 {
        return None;
    }
    let next = (scaled as u64).max(cur.saturating_add(1));
    (next <= max && next > cur).then_some(next)
}

/// A compact label for a byte count: `1K`, `64M`, `2G` when it is an exact multiple, else
/// the plain number (`1000`, `1536`).
pub fn size_label(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(KIB * KIB * KIB, "G"), (KIB * KIB, "M"), (KIB, "K")];
    UNITS
        .iter()
        .find(|(unit, _)| bytes >= *unit && bytes.is_multiple_of(*unit))
        .map_or_else(|| bytes.to_string(), |(unit, suffix)| format!("{}{suffix}", bytes / unit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_and_suffixed_sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("1K"), Ok(1024));
        assert_eq!(parse_size("1k"), Ok(1024));
        assert_eq!(parse_size("8KB"), Ok(8192));
        assert_eq!(parse_size("1KiB"), Ok(1024));
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("64MB"), Ok(64 << 20));
        assert_eq!(parse_size("64 mib"), Ok(64 << 20));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size(" 3gb "), Ok(3 << 30));
        assert_eq!(parse_size("512B"), Ok(512));
    }

    #[test]
    fn rejects_bad_sizes_naming_the_input() {
        for bad in ["", "K", "abc", "-1", "1.5M", "12Q", "1T", "5iB", "1KBB", "1 K B"] {
            let err = parse_size(bad).expect_err(bad);
            assert!(err.contains(&format!("`{bad}`")), "{bad}: {err}");
        }
        assert_eq!(parse_size("12Q"), Err("invalid size `12Q`: unknown unit `Q` (expected K, M or G)".to_string()));
        let huge = parse_size("99999999999999999999").expect_err("too large");
        assert_eq!(huge, "invalid size `99999999999999999999`: number too large");
        let over = parse_size("17179869184G").expect_err("overflow");
        assert_eq!(over, "invalid size `17179869184G`: overflows 64 bits");
    }

    #[test]
    fn sweep_1k_to_64m_by_2_has_17_sizes() {
        let sizes = sweep_sizes(1024, 64 << 20, 2.0).expect("valid sweep");
        assert_eq!(sizes.len(), 17);
        assert_eq!(sizes[0], 1024);
        assert_eq!(sizes[1], 2048);
        assert_eq!(sizes[16], 64 << 20);
    }

    #[test]
    fn sweep_stops_at_max_and_handles_odd_factors() {
        assert_eq!(sweep_sizes(1000, 9000, 2.0), Ok(vec![1000, 2000, 4000, 8000]));
        assert_eq!(sweep_sizes(1000, 5000, 1.5), Ok(vec![1000, 1500, 2250, 3375]));
        assert_eq!(sweep_sizes(1, 3, 1.2), Ok(vec![1, 2, 3]));
        assert_eq!(sweep_sizes(4096, 4096, 0.0), Ok(vec![4096]));
        assert_eq!(sweep_sizes(u64::MAX / 2, u64::MAX, 4.0), Ok(vec![u64::MAX / 2]));
    }

    #[test]
    fn sweep_errors() {
        assert_eq!(sweep_sizes(0, 8, 2.0), Err("invalid sweep: minimum size must be at least 1 byte".to_string()));
        assert_eq!(sweep_sizes(9, 8, 2.0), Err("invalid sweep: minimum size 9 exceeds maximum size 8".to_string()));
        assert_eq!(sweep_sizes(1, 8, 1.0), Err("invalid sweep: step factor 1 must be greater than 1".to_string()));
        assert!(sweep_sizes(1, 8, f64::NAN).is_err());
        let many = sweep_sizes(1, 1 << 20, 1.0001).expect_err("too many sizes");
        assert_eq!(many, "invalid sweep: factor 1.0001 from 1 to 1048576 gives over 4096 sizes");
    }

    #[test]
    fn labels_use_binary_suffixes() {
        assert_eq!(size_label(1024), "1K");
        assert_eq!(size_label(64 << 20), "64M");
        assert_eq!(size_label(2 << 30), "2G");
        assert_eq!(size_label(1536), "1536");
        assert_eq!(size_label(3 << 10), "3K");
        assert_eq!(size_label(512), "512");
        assert_eq!(size_label(0), "0");
    }
}
