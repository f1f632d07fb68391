//! Python's numeric semantics for the summaries: `math.fsum`, `statistics.fmean` / `median` /
//! `stdev`, the builtin `sum` / `min` / `max`, and `round()`. Matching them keeps every `:.1f`
//! rendering identical to PyPTO's.

use std::cmp::Ordering;

/// `math.fsum`: the sum of `values` rounded once, as if computed exactly (Shewchuk's
/// non-overlapping partials, with the final half-even correction across partials).
pub(crate) fn fsum(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut partials: Vec<f64> = Vec::new();
    for value in values {
        let mut x = value;
        let mut kept = 0;
        for j in 0..partials.len() {
            let mut y = partials[j];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                partials[kept] = lo;
                kept += 1;
            }
            x = hi;
        }
        partials.truncate(kept);
        partials.push(x);
    }
    round_partials(&partials)
}

/// Collapses ascending non-overlapping partials into the correctly rounded total.
fn round_partials(partials: &[f64]) -> f64 {
    let Some((&top, _)) = partials.split_last() else {
        return 0.0;
    };
    let mut hi = top;
    let mut lo = 0.0;
    let mut n = partials.len() - 1;
    while n > 0 {
        let x = hi;
        n -= 1;
        let y = partials[n];
        hi = x + y;
        lo = y - (hi - x);
        if lo != 0.0 {
            break;
        }
    }
    // A remainder of exactly half an ulp rounds to even unless a lower partial tips it.
    if n > 0 && ((lo < 0.0 && partials[n - 1] < 0.0) || (lo > 0.0 && partials[n - 1] > 0.0)) {
        let y = lo * 2.0;
        let x = hi + y;
        if y == x - hi {
            hi = x;
        }
    }
    hi
}

/// `statistics.fmean`: `fsum(values) / n`. Callers guard the empty case (Python raises).
pub(crate) fn fmean(values: &[f64]) -> f64 {
    fsum(values.iter().copied()) / values.len() as f64
}

/// `statistics.median`: the middle value, or the mean of the two middle values. `0.0` if empty.
pub(crate) fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap_or(Ordering::Equal));
    let n = sorted.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// `statistics.stdev` (sample, `n - 1`); `0.0` for fewer than two values. Python evaluates it
/// in exact rationals; a compensated two-pass evaluation agrees to within an ulp.
pub(crate) fn stdev(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 2 {
        return 0.0;
    }
    let mean = fmean(values);
    let deviations: Vec<f64> = values.iter().map(|x| x - mean).collect();
    let drift = fsum(deviations.iter().copied());
    let squares = fsum(deviations.iter().map(|d| d * d)) - drift * drift / n as f64;
    (squares.max(0.0) / (n - 1) as f64).sqrt()
}

/// `statistics.stdev` of integers (span durations): exact integer moments when they fit in
/// `i128`, so only the final division and square root round.
pub(crate) fn stdev_int(values: &[i64]) -> f64 {
    let n = values.len();
    if n < 2 {
        return 0.0;
    }
    match exact_variance_parts(values) {
        Some((num, den)) => (num as f64 / den as f64).sqrt(),
        None => stdev(&values.iter().map(|&v| v as f64).collect::<Vec<_>>()),
    }
}

/// `(n·Σx² − (Σx)², n·(n−1))`: the sample variance as a fraction, if it fits in `i128`.
fn exact_variance_parts(values: &[i64]) -> Option<(i128, i128)> {
    let n = i128::try_from(values.len()).ok()?;
    let mut sum: i128 = 0;
    let mut squares: i128 = 0;
    for &v in values {
        let v = i128::from(v);
        sum = sum.checked_add(v)?;
        squares = squares.checked_add(v.checked_mul(v)?)?;
    }
    let num = n.checked_mul(squares)?.checked_sub(sum.checked_mul(sum)?)?;
    Some((num, n.checked_mul(n - 1)?))
}

/// The builtin `sum()` of floats: Neumaier-compensated, as in Python 3.12 and later.
pub(crate) fn py_sum(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut total = 0.0f64;
    let mut compensation = 0.0f64;
    for x in values {
        let t = total + x;
        compensation += if total.abs() >= x.abs() { (total - t) + x } else { (x - t) + total };
        total = t;
    }
    if compensation != 0.0 && compensation.is_finite() { total + compensation } else { total }
}

/// The builtin `min()`: the first value no later value is strictly below; `None` if empty.
pub(crate) fn py_min(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    values.into_iter().reduce(|best, x| if x < best { x } else { best })
}

/// The builtin `max()`: the first value no later value is strictly above; `None` if empty.
pub(crate) fn py_max(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    values.into_iter().reduce(|best, x| if x > best { x } else { best })
}

/// `round(statistics.fmean(values))` for integers: the mean rounded half to even.
pub(crate) fn round_mean(values: &[i64]) -> i64 {
    let floats: Vec<f64> = values.iter().map(|&v| v as f64).collect();
    // `as` saturates; a mean outside i64 cannot come from i64 inputs anyway.
    fmean(&floats).round_ties_even() as i64
}
