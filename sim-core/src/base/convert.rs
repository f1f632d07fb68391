//! Element conversion with a rounding mode: what `cast` (pto-isa's TCVT) does to each element.
//! Float targets go through `round`'s single correctly rounded f64 -> f16 / bf16 / f32 step,
//! the same one every host write ([`DType::write_f64`]) uses; integer targets saturate here.
//!
//! Values are handled as f64, which holds every element of every supported type exactly, so
//! each conversion rounds once.

use crate::base::dtype::DType;
use crate::base::round::FloatFormat;
pub use crate::base::round::RoundMode;

/// The format of a float dtype.
fn float_format(dt: DType) -> Option<FloatFormat> {
    match dt {
        DType::F32 => Some(FloatFormat::F32),
        DType::F16 => Some(FloatFormat::F16),
        DType::BF16 => Some(FloatFormat::BF16),
        _ => None,
    }
}

/// `v` converted to integer type `to` with `mode`, saturating at the type's range; NaN is 0.
fn to_int(v: f64, to: DType, mode: RoundMode) -> f64 {
    let (lo, hi) = match to {
        DType::I32 => (i32::MIN as f64, i32::MAX as f64),
        DType::I16 => (i16::MIN as f64, i16::MAX as f64),
        _ => (i8::MIN as f64, i8::MAX as f64),
    };
    if v.is_nan() { 0.0 } else { mode.integral(v).clamp(lo, hi) }
}

/// `v` converted to `to` with `mode`, as the f64 it becomes.
pub(crate) fn convert(v: f64, to: DType, mode: RoundMode) -> f64 {
    match float_format(to) {
        Some(f) => f.round(v, mode) as f64,
        None => to_int(v, to, mode),
    }
}

/// Whether the vector unit converts `from` to `to` directly. These are the pairs pto-isa's
/// A2/A3 TCVT implements (`include/pto/npu/a2a3/TCvt.hpp`, its list of supported
/// conversions), restricted to ranksim's dtypes; a cast to the same type rounds to it.
pub fn cast_supported(from: DType, to: DType) -> bool {
    use DType::*;
    from == to
        || matches!(
            (from, to),
            (F32, F16 | BF16 | I32 | I16)
                | (F16, F32 | I32 | I16 | I8)
                | (BF16, F32 | I32)
                | (I16, F16 | F32)
                | (I32, F32 | I16 | F16)
                | (I8, F16)
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(e: i32) -> f64 {
        2f64.powi(e)
    }

    #[test]
    fn float_modes_round_the_last_place() {
        let f = FloatFormat::BF16;
        let v = 1.0 + p(-8) + p(-20); // between 1 and 1 + 2^-7, above the middle
        assert_eq!(f.round(v, RoundMode::Rint) as f64, 1.0 + p(-7));
        assert_eq!(f.round(v, RoundMode::Trunc) as f64, 1.0);
        assert_eq!(f.round(v, RoundMode::Floor) as f64, 1.0);
        assert_eq!(f.round(v, RoundMode::Ceil) as f64, 1.0 + p(-7));
        assert_eq!(f.round(-v, RoundMode::Floor) as f64, -(1.0 + p(-7)));
        assert_eq!(f.round(-v, RoundMode::Ceil) as f64, -1.0);
        // Ties: to even vs away from zero.
        assert_eq!(f.round(1.0 + p(-8), RoundMode::Rint) as f64, 1.0);
        assert_eq!(f.round(1.0 + p(-8), RoundMode::Round) as f64, 1.0 + p(-7));
        // Odd: truncated 1.0 has an even last bit and the value was inexact.
        assert_eq!(f.round(v, RoundMode::Odd) as f64, 1.0 + p(-7));
        assert_eq!(f.round(1.0 + p(-7) + p(-20), RoundMode::Odd) as f64, 1.0 + p(-7));
    }

    #[test]
    fn overflow_goes_to_infinity_or_the_largest_value_by_mode() {
        let f = FloatFormat::F16;
        assert!(f.round(70000.0, RoundMode::Rint).is_infinite());
        assert_eq!(f.round(70000.0, RoundMode::Trunc), 65504.0);
        assert_eq!(f.round(70000.0, RoundMode::Floor), 65504.0);
        assert_eq!(f.round(-70000.0, RoundMode::Floor), f32::NEG_INFINITY);
        assert_eq!(f.round(-70000.0, RoundMode::Ceil), -65504.0);
    }

    #[test]
    fn integers_round_by_mode_and_saturate() {
        assert_eq!(convert(2.5, DType::I32, RoundMode::Rint), 2.0);
        assert_eq!(convert(2.5, DType::I32, RoundMode::Round), 3.0);
        assert_eq!(convert(-2.5, DType::I32, RoundMode::Round), -3.0);
        assert_eq!(convert(-2.5, DType::I32, RoundMode::Floor), -3.0);
        assert_eq!(convert(-2.5, DType::I32, RoundMode::Trunc), -2.0);
        assert_eq!(convert(1e10, DType::I32, RoundMode::Rint), i32::MAX as f64);
        assert_eq!(convert(-300.0, DType::I8, RoundMode::Rint), -128.0);
        assert_eq!(convert(f64::NAN, DType::I16, RoundMode::Rint), 0.0);
        assert_eq!(convert(40000.0, DType::I16, RoundMode::Trunc), 32767.0);
    }

    #[test]
    fn the_a2a3_pairs_and_nothing_else() {
        assert!(cast_supported(DType::F32, DType::BF16));
        assert!(cast_supported(DType::I8, DType::F16));
        assert!(cast_supported(DType::BF16, DType::BF16));
        assert!(!cast_supported(DType::F16, DType::BF16));
        assert!(!cast_supported(DType::I8, DType::F32));
        let n = DType::ALL.iter().flat_map(|&a| DType::ALL.map(move |b| (a, b))).filter(|&(a, b)| cast_supported(a, b));
        assert_eq!(n.count(), 6 + 16);
    }

    #[test]
    fn mode_names_parse_both_spellings() {
        assert_eq!("CAST_RINT".parse::<RoundMode>().unwrap(), RoundMode::Rint);
        assert_eq!("floor".parse::<RoundMode>().unwrap(), RoundMode::Floor);
        assert!("nearest".parse::<RoundMode>().unwrap_err().contains("expected rint"));
    }
}
