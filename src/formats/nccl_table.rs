//! The nccl-tests text table (`src/util.cu`: `writeResultHeader`, `writeBenchmarkLinePreamble`,
//! `writeBenchmarkLineBody`, `writeResultFooter`), out-of-place half only. Trailing blanks that
//! the C format strings leave are trimmed. Every function returns text without a final newline.

use super::cfmt::{fmt_e, fmt_g, nonfinite};
use super::record::{ResultRow, SweepConfig};
use sim_core::DType;

/// The nccl-tests name of a dtype (`float`, `half`, `bfloat16`, `int32`, ...).
pub fn nccl_type(dt: DType) -> &'static str {
    match dt {
        DType::F32 => "float",
        DType::F16 => "half",
        DType::BF16 => "bfloat16",
        DType::I32 => "int32",
        DType::I16 => "int16",
        DType::I8 => "int8",
    }
}

/// Width of the `time` column.
const TIME_WIDTH: usize = 7;
/// Width of the `algbw` and `busbw` columns.
const BW_WIDTH: usize = 6;

/// A number squeezed right-aligned into `width` characters, as nccl-tests' `getFloatStr` does:
/// two decimals if the integer part leaves room, else one, else none, else exponent form
/// (`1.2e+08` for widths of 7 and more, `1e+08` below). Like the original, rounding can carry
/// into one more character (`9999.99` at width 6).
pub fn float_str(value: f64, width: usize) -> String {
    // -0.0 (an empty sum in Rust) prints as 0, not `-0.00`.
    let value = value + 0.0;
    let text = if value.is_finite() { squeeze(value, width) } else { nonfinite(value) };
    format!("{text:>width$}")
}

/// The `time` column: as [`float_str`] at its width, but never in exponent form, so a long
/// simulated time keeps every digit (`12345678`, not `1.2e+07`); the column widens instead.
pub fn time_str(value: f64) -> String {
    if value.is_finite() && integer_digits(value) > TIME_WIDTH {
        return format!("{value:.0}");
    }
    float_str(value, TIME_WIDTH)
}

/// The unpadded text of [`float_str`] for a finite value.
fn squeeze(value: f64, width: usize) -> String {
    let digits = integer_digits(value);
    if digits + 2 < width {
        format!("{value:.2}")
    } else if digits + 1 < width {
        format!("{value:.1}")
    } else if digits < width + 1 {
        format!("{value:.0}")
    } else if width >= 7 {
        fmt_e(value, 1)
    } else {
        fmt_e(value, 0)
    }
}

/// Digits before the decimal point (0 below 1, including negatives), as `getFloatStr` counts.
fn integer_digits(value: f64) -> usize {
    let (mut digits, mut bound) = (0, 1.0);
    while value >= bound && digits < 400 {
        digits += 1;
        bound *= 10.0;
    }
    digits
}

/// The two column-header lines (names, then units).
pub fn header() -> String {
    let names = header_line(["size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong"]);
    let units = header_line(["(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", ""]);
    format!("{names}\n{units}")
}

/// One header line: nccl-tests' `"# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s"`.
fn header_line(c: [&str; 9]) -> String {
    let line = format!(
        "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}",
        c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]
    );
    line.trim_end().to_string()
}

/// One data line: `"%12li  %12li  %8s  %6s  %6i"` then `"  %7s  %6s  %6s  %6i"` (or `N/A`
/// when `nwrong` is `None`), with time and bandwidths squeezed by [`float_str`]. nccl-tests
/// prints `#wrong` with `%6g`, which turns 1048576 into `1.04858e+06`; a count is printed
/// here as the integer it is.
pub fn row(r: &ResultRow) -> String {
    if let Some(why) = &r.failed {
        // No time, no bandwidth: the reason takes their place.
        return format!(
            "{:>12}  {:>12}  {:>8}  {:>6}  {:>6}  FAILED: {why}",
            r.size, r.count, r.type_name, r.redop, r.root
        );
    }
    let wrong = match r.nwrong {
        Some(n) => format!("{n:>6}"),
        // util.cu prints `"    N/A"`: one column narrower than `"  %6g"`.
        None => "  N/A".to_string(),
    };
    format!(
        "{:>12}  {:>12}  {:>8}  {:>6}  {:>6}  {}  {}  {}  {wrong}",
        r.size,
        r.count,
        r.type_name,
        r.redop,
        r.root,
        time_str(r.time_us),
        float_str(r.algbw_gbps, BW_WIDTH),
        float_str(r.busbw_gbps, BW_WIDTH),
    )
}

/// The run-description line that opens the output, in the spirit of nccl-tests'
/// `# nThread .. minBytes .. maxBytes .. step: .. warmup iters: .. iters: .. validation: ..`.
pub fn preamble(version: &str, cfg: &SweepConfig) -> String {
    let validation = if cfg.timing_only { "off (timing-only)" } else { "on" };
    let jitter = match (cfg.jitter_op_ns, cfg.jitter_dispatch_ns) {
        (Some(op), Some(d)) => format!("jitter: up to {op} ns per transfer, {d} ns per dispatch"),
        _ => "jitter: off".to_string(),
    };
    format!(
        "# ranksim {version} sweep: collective {} mode {} path {} core_num {} dtype {} redop {} root {} ranks {} \
         machine {} minBytes {} maxBytes {} step: {}(factor) warmup iters: {} iters: {} seed: {} \
         {jitter} validation: {validation}",
        cfg.collective,
        cfg.mode,
        cfg.path,
        cfg.core_num,
        cfg.dtype,
        cfg.redop,
        cfg.root,
        cfg.ranks,
        cfg.machine,
        cfg.min_bytes,
        cfg.max_bytes,
        fmt_g(cfg.step_factor),
        cfg.warmup,
        cfg.iters,
        cfg.seed,
    )
}

/// What a series' rows say about its results, for the footer's out-of-bounds line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Wrong elements over the checked rows.
    pub wrong: u64,
    /// Rows whose elements were checked.
    pub checked: usize,
    /// Rows with no measurement (FAILED rows).
    pub failed: usize,
}

impl Verdict {
    /// The verdict of `rows`.
    pub fn of(rows: &[ResultRow]) -> Verdict {
        Verdict {
            wrong: rows.iter().filter_map(|r| r.nwrong).sum(),
            checked: rows.iter().filter(|r| r.nwrong.is_some()).count(),
            failed: rows.iter().filter(|r| r.failed.is_some()).count(),
        }
    }

    /// Whether anything failed: a wrong element or a row with no measurement.
    pub fn is_failed(&self) -> bool {
        self.wrong > 0 || self.failed > 0
    }
}

/// The closing lines: the out-of-bounds line, the average bus bandwidth (`%g`) and a lone `#`.
/// As nccl-tests' `writeResultFooter`, the out-of-bounds line counts wrong elements and says
/// `FAILED` when there is one; it also says `FAILED` when a row has no measurement, and
/// `N/A` when no row was checked (a timing-only run), rather than an `OK` nobody verified.
pub fn footer(avg_busbw: f64, v: Verdict) -> String {
    let status = if v.is_failed() {
        format!("{} FAILED", v.wrong)
    } else if v.checked == 0 {
        "N/A (not checked: timing-only)".to_string()
    } else {
        format!("{} OK", v.wrong)
    };
    format!("# {:<20} : {status}\n# {:<20} : {}\n#", "Out of bounds values", "Avg bus bandwidth", fmt_g(avg_busbw))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::record::test_row as result;

    #[test]
    fn float_str_squeezes_into_width_7() {
        assert_eq!(float_str(0.04, 7), "   0.04");
        assert_eq!(float_str(93.73, 7), "  93.73");
        assert_eq!(float_str(1234.5678, 7), "1234.57");
        assert_eq!(float_str(12345.6, 7), "12345.6");
        assert_eq!(float_str(1234567.0, 7), "1234567");
        assert_eq!(float_str(123456789.0, 7), "1.2e+08");
        assert_eq!(float_str(0.0, 7), "   0.00");
        assert_eq!(float_str(-0.0, 7), "   0.00");
        assert_eq!(float_str([0.0f64; 0].iter().sum::<f64>(), 6), "  0.00");
        assert_eq!(float_str(f64::NAN, 7), "    nan");
        assert_eq!(float_str(f64::INFINITY, 7), "    inf");
    }

    #[test]
    fn float_str_squeezes_into_width_6() {
        assert_eq!(float_str(0.04, 6), "  0.04");
        assert_eq!(float_str(999.5, 6), "999.50");
        assert_eq!(float_str(1234.56, 6), "1234.6");
        assert_eq!(float_str(12345.6, 6), " 12346");
        assert_eq!(float_str(1234567.0, 6), " 1e+06");
    }

    #[test]
    fn long_times_keep_every_digit() {
        assert_eq!(time_str(12_345_678.4), "12345678");
        assert_eq!(time_str(123_456_789.0), "123456789");
        assert_eq!(time_str(1234567.0), "1234567");
        assert_eq!(time_str(93.73), "  93.73");
        let r = result(1 << 30, 1 << 28, "sum", 23_456_789.0, (0.05, 0.08), Some(0));
        assert!(row(&r).contains("  23456789  "), "{}", row(&r));
    }

    #[test]
    fn header_lines_match_nccl_tests() {
        let expected = "#       size         count      type   redop    root     time   algbw   busbw  #wrong\n\
                        #        (B)    (elements)                               (us)  (GB/s)  (GB/s)";
        assert_eq!(header(), expected);
    }

    #[test]
    fn row_matches_nccl_tests_example() {
        // The first row of nccl-tests issue #176 as util.cu prints it.
        let r = result(4096, 1024, "sum", 93.73, (0.04, 0.09), Some(0));
        assert_eq!(row(&r), "        4096          1024     float     sum      -1    93.73    0.04    0.09       0");
    }

    #[test]
    fn row_for_unchecked_allgather() {
        // 1 MiB AllGather of f32 on 8 ranks in 1234.5678 us: algbw 0.849, busbw 0.743.
        let r = result(1 << 20, 32768, "none", 1234.5678, (0.8493466296464236, 0.7431783009406207), None);
        assert_eq!(row(&r), "     1048576         32768     float    none      -1  1234.57    0.85    0.74    N/A");
        let wrong = result(8, 2, "sum", 5.0, (0.0, 0.0), Some(1234567));
        assert_eq!(
            row(&wrong),
            "           8             2     float     sum      -1     5.00    0.00    0.00  1234567"
        );
    }

    #[test]
    fn preamble_describes_the_run() {
        let cfg = SweepConfig {
            machine: "a2a3-8".to_string(),
            ranks: 8,
            collective: "allreduce".to_string(),
            mode: "ring".to_string(),
            path: "host".to_string(),
            core_num: 48,
            dtype: "float".to_string(),
            redop: "sum".to_string(),
            root: -1,
            min_bytes: 1024,
            max_bytes: 64 << 20,
            step_factor: 2.0,
            warmup: 5,
            iters: 20,
            seed: 42,
            jitter_op_ns: Some(20),
            jitter_dispatch_ns: Some(1000),
            timing_only: true,
        };
        assert_eq!(
            preamble("0.1.0", &cfg),
            "# ranksim 0.1.0 sweep: collective allreduce mode ring path host core_num 48 dtype float redop sum root -1 \
             ranks 8 machine a2a3-8 minBytes 1024 maxBytes 67108864 step: 2(factor) warmup iters: 5 \
             iters: 20 seed: 42 jitter: up to 20 ns per transfer, 1000 ns per dispatch validation: off (timing-only)"
        );
        let checked = SweepConfig { timing_only: false, step_factor: 1.5, jitter_op_ns: None, ..cfg };
        assert!(
            preamble("0.1.0", &checked)
                .ends_with("step: 1.5(factor) warmup iters: 5 iters: 20 seed: 42 jitter: off validation: on")
        );
    }

    #[test]
    fn a_failed_row_shows_its_reason_instead_of_a_time() {
        let r = ResultRow::failed(1000, 250, "float", "sum", -1, "cut short: the ring returned".into());
        assert_eq!(
            row(&r),
            "        1000           250     float     sum      -1  FAILED: cut short: the ring returned"
        );
    }

    #[test]
    fn footer_uses_nccl_tests_spacing() {
        let ok = Verdict { wrong: 0, checked: 3, failed: 0 };
        assert_eq!(footer(0.874326, ok), "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.874326\n#");
        assert_eq!(footer(123.4567891, ok), "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 123.457\n#");
    }

    #[test]
    fn footer_counts_wrong_elements_and_never_says_ok_about_them() {
        let rows =
            [result(8, 2, "sum", 5.0, (1.0, 1.0), Some(2)), result(16, 4, "sum", 5.0, (1.0, 1.0), Some(1_048_576))];
        let v = Verdict::of(&rows);
        assert_eq!(v, Verdict { wrong: 1_048_578, checked: 2, failed: 0 });
        assert!(footer(1.0, v).starts_with("# Out of bounds values : 1048578 FAILED\n"), "{}", footer(1.0, v));
        // A row with no measurement fails the series even with no wrong element.
        let failed =
            [result(8, 2, "sum", 5.0, (1.0, 1.0), Some(0)), ResultRow::failed(16, 4, "float", "sum", -1, "x".into())];
        assert!(footer(1.0, Verdict::of(&failed)).starts_with("# Out of bounds values : 0 FAILED\n"));
        // Nothing checked: no OK either.
        let unchecked = [result(8, 2, "sum", 5.0, (1.0, 1.0), None)];
        assert!(
            footer(1.0, Verdict::of(&unchecked))
                .starts_with("# Out of bounds values : N/A (not checked: timing-only)\n")
        );
    }
}
