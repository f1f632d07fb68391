//! Rounding an f64 into a narrower float format with a rounding mode: the one rounding step
//! shared by `cast` ([`crate::base::convert`]) and every host write ([`crate::base::dtype::DType::write_f64`]).
//! It knows formats by their bit layout only, not by dtype, so it sits below both.

use std::fmt;
use std::str::FromStr;

/// How a conversion rounds (pto-isa's `RoundMode`, without `CAST_NONE`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum RoundMode {
    /// To nearest, ties to even (`CAST_RINT`).
    #[default]
    Rint,
    /// To nearest, ties away from zero (`CAST_ROUND`).
    Round,
    /// Toward minus infinity (`CAST_FLOOR`).
    Floor,
    /// Toward plus infinity (`CAST_CEIL`).
    Ceil,
    /// Toward zero (`CAST_TRUNC`).
    Trunc,
    /// Toward zero, then the last bit set when inexact (`CAST_ODD`; float targets only).
    Odd,
}

impl RoundMode {
    /// Every mode.
    pub const ALL: [RoundMode; 6] =
        [RoundMode::Rint, RoundMode::Round, RoundMode::Floor, RoundMode::Ceil, RoundMode::Trunc, RoundMode::Odd];

    /// The lower-case name (`rint`, `round`, `floor`, `ceil`, `trunc`, `odd`).
    pub const fn name(self) -> &'static str {
        match self {
            RoundMode::Rint => "rint",
            RoundMode::Round => "round",
            RoundMode::Floor => "floor",
            RoundMode::Ceil => "ceil",
            RoundMode::Trunc => "trunc",
            RoundMode::Odd => "odd",
        }
    }

    /// `x` (finite) rounded to an integer value.
    pub(crate) fn integral(self, x: f64) -> f64 {
        match self {
            RoundMode::Rint => x.round_ties_even(),
            RoundMode::Round => x.round(),
            RoundMode::Floor => x.floor(),
            RoundMode::Ceil => x.ceil(),
            RoundMode::Trunc => x.trunc(),
            RoundMode::Odd => {
                let t = x.trunc();
                if t != x && t % 2.0 == 0.0 { t + x.signum() } else { t }
            }
        }
    }

    /// Whether a value too large for the format becomes infinity (else the largest finite
    /// value of its sign), for a value of sign `negative`.
    fn overflows_to_infinity(self, negative: bool) -> bool {
        match self {
            RoundMode::Rint | RoundMode::Round => true,
            RoundMode::Floor => negative,
            RoundMode::Ceil => !negative,
            RoundMode::Trunc | RoundMode::Odd => false,
        }
    }
}

impl fmt::Display for RoundMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RoundMode {
    type Err = String;
    /// Accepts the names and pto-isa's spellings (`CAST_RINT`, ...).
    fn from_str(s: &str) -> Result<RoundMode, String> {
        let l = s.to_ascii_lowercase();
        let l = l.strip_prefix("cast_").unwrap_or(&l);
        RoundMode::ALL
            .into_iter()
            .find(|m| m.name() == l)
            .ok_or_else(|| format!("unknown rounding mode `{s}`: expected rint, round, floor, ceil, trunc or odd"))
    }
}

/// A binary floating-point format narrower than f64.
#[derive(Copy, Clone, Debug)]
pub(crate) struct FloatFormat {
    /// Stored mantissa bits.
    mantissa_bits: i32,
    /// Exponent of the smallest normal number.
    min_exp: i32,
    /// The largest finite value.
    max: f64,
}

impl FloatFormat {
    pub(crate) const F32: FloatFormat =
        FloatFormat { mantissa_bits: 23, min_exp: -126, max: 3.402_823_466_385_288_6e38 };
    pub(crate) const F16: FloatFormat = FloatFormat { mantissa_bits: 10, min_exp: -14, max: 65504.0 };
    pub(crate) const BF16: FloatFormat =
        FloatFormat { mantissa_bits: 7, min_exp: -126, max: 3.389_531_389_251_535_5e38 };

    /// `v` rounded into the format in one step (subnormals included). The result is exact
    /// in f32, so storing it as f16 / bf16 / f32 does not round again.
    pub(crate) fn round(&self, v: f64, mode: RoundMode) -> f32 {
        if !v.is_finite() {
            return v as f32;
        }
        let biased = ((v.to_bits() >> 52) & 0x7ff) as i32;
        let exp = (biased - 1023).max(self.min_exp);
        let ulp = 2f64.powi(exp - self.mantissa_bits);
        let negative = v.is_sign_negative();
        // Round the signed multiple of the ulp, so floor and ceil see the sign.
        let r = mode.integral(v / ulp) * ulp;
        let r = if r.abs() > self.max {
            let big = if mode.overflows_to_infinity(negative) { f64::INFINITY } else { self.max };
            if negative { -big } else { big }
        } else if r == 0.0 && negative {
            -0.0
        } else {
            r
        };
        r as f32
    }
}
