//! Python float semantics the renderings rely on.

use super::super::numeric::{fmean, fsum, median, py_max, py_min, py_sum, round_mean, stdev, stdev_int};

#[test]
fn one_decimal_formatting_rounds_half_even_on_the_binary_value() {
    assert_eq!(format!("{:.1}", 0.25), "0.2");
    // 0.35 is stored just below .35, 0.45 and 0.05 just above their halves.
    assert_eq!(format!("{:.1}", 0.35), "0.3");
    assert_eq!(format!("{:.1}", 0.45), "0.5");
    assert_eq!(format!("{:.1}", 0.05), "0.1");
    assert_eq!(format!("{:.1}", 2.5), "2.5");
    assert_eq!(format!("{:.1}", 11.25), "11.2");
    assert_eq!(format!("{:.1}", 56.25), "56.2");
    assert_eq!(format!("{:.1}", -0.0), "-0.0");
}

#[test]
fn fsum_is_exactly_rounded() {
    assert_eq!(fsum([0.1; 10]), 1.0);
    assert_eq!(fsum([1e16, 1.0, -1e16]), 1.0);
    assert_eq!(fsum([1.0, 1e-16, 1e-16]), 1.000_000_000_000_000_2);
    // Two half-ulp remainders combine instead of both rounding away.
    assert_eq!(fsum([2f64.powi(53), 1.0, 1.0]), 9_007_199_254_740_994.0);
    assert_eq!(fsum([1e308, 5e307, -1e308]), 5e307);
    assert_eq!(fsum(std::iter::empty()), 0.0);
}

#[test]
fn builtin_sum_is_compensated() {
    assert_eq!(py_sum([0.1; 10]), 1.0);
    assert_eq!(py_sum([1e16, 1.0, -1e16]), 1.0);
    assert_eq!(py_sum(std::iter::empty()), 0.0);
}

#[test]
fn mean_median_and_sample_stdev() {
    assert_eq!(fmean(&[10.0, 12.5, 11.25]), 11.25);
    assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
    assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    assert_eq!(median(&[]), 0.0);
    assert_eq!(stdev(&[1.0, 2.0, 3.0, 4.0]), 1.290_994_448_735_805_6);
    assert_eq!(stdev(&[10.0, 12.5, 11.25]), 1.25);
    assert_eq!(stdev(&[110.0, 120.0]), 7.071_067_811_865_475_5);
    assert_eq!(stdev(&[3.0]), 0.0);
    assert_eq!(stdev(&[]), 0.0);
}

#[test]
fn integer_stdev_is_exact_before_the_square_root() {
    assert_eq!(stdev_int(&[100_000, 120_000]), 14_142.135_623_730_95);
    assert_eq!(stdev_int(&[110_000, 115_000]), 3_535.533_905_932_737_5);
    assert_eq!(stdev_int(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 1_000_000_000_000]), 316_227_766_015.256_8);
    assert_eq!(stdev_int(&[7]), 0.0);
}

#[test]
fn min_max_keep_the_first_of_equals() {
    assert_eq!(py_min([3.0, 1.0, 2.0]), Some(1.0));
    assert_eq!(py_max([3.0, 1.0, 2.0]), Some(3.0));
    assert_eq!(py_min([0.0, -0.0]).map(f64::is_sign_negative), Some(false));
    assert_eq!(py_max(std::iter::empty()), None);
}

#[test]
fn rounded_mean_ties_to_even() {
    assert_eq!(round_mean(&[1, 2]), 2);
    assert_eq!(round_mean(&[2, 3]), 2);
    assert_eq!(round_mean(&[1, 2, 2, 2]), 2);
    assert_eq!(round_mean(&[-1, 0]), 0);
    assert_eq!(round_mean(&[2_000_000, 3_000_001]), 2_500_000);
}
