//! C `printf` number formats (`%g`, `%.Ne`) that Rust's `format!` does not spell the same way.
//! nccl-tests prints with these, so byte-identical tables need them.

/// `%g`: six significant digits, trailing zeros dropped, exponent form outside `[1e-4, 1e6)`.
pub(crate) fn fmt_g(v: f64) -> String {
    if !v.is_finite() {
        return nonfinite(v);
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let exp = decimal_exponent(v, 5);
    if !(-4..6).contains(&exp) {
        let sci = fmt_e(v, 5);
        match sci.split_once('e') {
            Some((mant, rest)) => format!("{}e{rest}", strip_zeros(mant)),
            None => sci,
        }
    } else {
        let decimals = usize::try_from(5 - exp).unwrap_or(0);
        strip_zeros(&format!("{v:.decimals$}"))
    }
}

/// `%.{prec}e`: mantissa, `e`, sign and an exponent of at least two digits (`1.2e+07`).
pub(crate) fn fmt_e(v: f64, prec: usize) -> String {
    if !v.is_finite() {
        return nonfinite(v);
    }
    let rust = format!("{v:.prec$e}");
    let Some((mant, exp)) = rust.split_once('e') else { return rust };
    let (sign, digits) = match exp.strip_prefix('-') {
        Some(d) => ('-', d),
        None => ('+', exp),
    };
    format!("{mant}e{sign}{digits:0>2}")
}

/// C's spelling of infinities and NaN (`inf`, `-inf`, `nan`).
pub(crate) fn nonfinite(v: f64) -> String {
    if v.is_nan() {
        "nan".to_string()
    } else if v > 0.0 {
        "inf".to_string()
    } else {
        "-inf".to_string()
    }
}

/// The decimal exponent of `v` after rounding to `prec` decimals in exponent form.
fn decimal_exponent(v: f64, prec: usize) -> i32 {
    let sci = format!("{v:.prec$e}");
    sci.split_once('e').and_then(|(_, e)| e.parse().ok()).unwrap_or(0)
}

/// Drop trailing zeros of a fractional part, then a dangling point (`%g` does this).
fn strip_zeros(s: &str) -> String {
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_matches_printf() {
        assert_eq!(fmt_g(0.0), "0");
        assert_eq!(fmt_g(0.0874), "0.0874");
        assert_eq!(fmt_g(0.874326), "0.874326");
        assert_eq!(fmt_g(1234567.0), "1.23457e+06");
        assert_eq!(fmt_g(999999.0), "999999");
        assert_eq!(fmt_g(1e-5), "1e-05");
        assert_eq!(fmt_g(2.0), "2");
        assert_eq!(fmt_g(1.5), "1.5");
        assert_eq!(fmt_g(-3.25), "-3.25");
        assert_eq!(fmt_g(f64::NAN), "nan");
    }

    #[test]
    fn e_matches_printf() {
        assert_eq!(fmt_e(123456789.0, 1), "1.2e+08");
        assert_eq!(fmt_e(1234567.0, 0), "1e+06");
        assert_eq!(fmt_e(0.000123, 2), "1.23e-04");
        assert_eq!(fmt_e(f64::NEG_INFINITY, 1), "-inf");
    }
}
