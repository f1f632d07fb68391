//! Element types of tensors, tiles and windows, and the conversion of typed host data to the
//! little-endian bytes that simulated memory holds.

use crate::base::round::{FloatFormat, RoundMode};
use half::{bf16, f16};
use std::fmt;
use std::str::FromStr;

/// An element type. Memory holds little-endian bytes; arithmetic on f16/bf16 is done in f32
/// and rounded back after every operation, as a 16-bit vector unit would.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum DType {
    /// 32-bit IEEE float.
    F32,
    /// 16-bit IEEE float (`f16`).
    F16,
    /// 16-bit bfloat (`bf16`).
    BF16,
    /// Signed 32-bit integer (the type of signal cells).
    I32,
    /// Signed 16-bit integer.
    I16,
    /// Signed 8-bit integer.
    I8,
}

impl DType {
    /// Every supported dtype, in a fixed order.
    pub const ALL: [DType; 6] = [DType::F32, DType::F16, DType::BF16, DType::I32, DType::I16, DType::I8];

    /// Bytes per element.
    pub const fn size(self) -> usize {
        match self {
            DType::F32 | DType::I32 => 4,
            DType::F16 | DType::BF16 | DType::I16 => 2,
            DType::I8 => 1,
        }
    }

    /// The short name used in configs, the CLI and tables (`f32`, `bf16`, `i32`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::I32 => "i32",
            DType::I16 => "i16",
            DType::I8 => "i8",
        }
    }

    /// Whether the type is a floating-point type.
    pub const fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F16 | DType::BF16)
    }

    /// Reads element `i` of `bytes` as f64 (exact for every supported type).
    pub fn read_f64(self, bytes: &[u8], i: usize) -> f64 {
        let s = self.size();
        let b = &bytes[i * s..(i + 1) * s];
        match self {
            DType::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
            DType::F16 => f16::from_le_bytes([b[0], b[1]]).to_f64(),
            DType::BF16 => bf16::from_le_bytes([b[0], b[1]]).to_f64(),
            DType::I32 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
            DType::I16 => i16::from_le_bytes([b[0], b[1]]) as f64,
            DType::I8 => b[0] as i8 as f64,
        }
    }

    /// Writes `v` into element `i` of `bytes`, rounding to nearest even in one step for floats
    /// (`half`'s own `from_f64` truncates before it rounds, and going through f32 rounds twice)
    /// and saturating for integers.
    pub fn write_f64(self, bytes: &mut [u8], i: usize, v: f64) {
        let s = self.size();
        let b = &mut bytes[i * s..(i + 1) * s];
        match self {
            DType::F32 => b.copy_from_slice(&(v as f32).to_le_bytes()),
            DType::F16 => b.copy_from_slice(&f16::from_f32(FloatFormat::F16.round(v, RoundMode::Rint)).to_le_bytes()),
            DType::BF16 => {
                b.copy_from_slice(&bf16::from_f32(FloatFormat::BF16.round(v, RoundMode::Rint)).to_le_bytes())
            }
            DType::I32 => b.copy_from_slice(&(v as i32).to_le_bytes()),
            DType::I16 => b.copy_from_slice(&(v as i16).to_le_bytes()),
            DType::I8 => b.copy_from_slice(&(v as i8).to_le_bytes()),
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DType {
    type Err = String;
    /// Accepts the short names and the PyPTO spellings (`fp32`, `float16`, `int32`, ...).
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "f32" | "fp32" | "float" | "float32" => DType::F32,
            "f16" | "fp16" | "half" | "float16" => DType::F16,
            "bf16" | "bfloat16" => DType::BF16,
            "i32" | "int32" | "int" => DType::I32,
            "i16" | "int16" => DType::I16,
            "i8" | "int8" => DType::I8,
            other => {
                return Err(format!("unknown dtype `{other}`: expected one of f32, f16, bf16, i32, i16, i8"));
            }
        })
    }
}

/// A host-side element type that maps to a [`DType`].
pub trait Element: Copy + PartialEq + Send + Sync + 'static + fmt::Debug {
    /// The simulated dtype of this Rust type.
    const DTYPE: DType;
    /// Appends the little-endian encoding of `self` to `out`.
    fn put(self, out: &mut Vec<u8>);
    /// Writes the little-endian encoding of `self` into exactly `DTYPE.size()` bytes.
    fn write_le(self, out: &mut [u8]);
    /// Decodes one element from exactly `DTYPE.size()` bytes.
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! element {
    ($t:ty, $d:expr) => {
        impl Element for $t {
            const DTYPE: DType = $d;
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn write_le(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(bytes);
                <$t>::from_le_bytes(a)
            }
        }
    };
}
element!(f32, DType::F32);
element!(f16, DType::F16);
element!(bf16, DType::BF16);
element!(i32, DType::I32);
element!(i16, DType::I16);
element!(i8, DType::I8);

/// Encodes a typed slice as little-endian bytes.
pub(crate) fn to_bytes<T: Element>(data: &[T]) -> Vec<u8> {
    let mut out = vec![0u8; data.len() * T::DTYPE.size()];
    encode(data, &mut out);
    out
}

/// Encodes `data` into `out` (`data.len()` elements of bytes), in one loop the compiler turns
/// into a copy on a little-endian host.
pub(crate) fn encode<T: Element>(data: &[T], out: &mut [u8]) {
    debug_assert_eq!(out.len(), data.len() * T::DTYPE.size());
    for (o, &x) in out.chunks_exact_mut(T::DTYPE.size()).zip(data) {
        x.write_le(o);
    }
}

/// Decodes little-endian bytes as a typed vector (`bytes.len()` must be a multiple of the size).
pub(crate) fn from_bytes<T: Element>(bytes: &[u8]) -> Vec<T> {
    bytes.chunks_exact(T::DTYPE.size()).map(T::get).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_names() {
        assert_eq!(DType::F32.size(), 4);
        assert_eq!(DType::BF16.size(), 2);
        assert_eq!(DType::I8.size(), 1);
        assert_eq!("fp16".parse::<DType>().unwrap(), DType::F16);
        assert!("u4".parse::<DType>().unwrap_err().contains("expected one of"));
    }

    #[test]
    fn bytes_round_trip() {
        let v = vec![1.5f32, -2.0, 3.25];
        assert_eq!(from_bytes::<f32>(&to_bytes(&v)), v);
        let h = vec![f16::from_f32(0.5), f16::from_f32(-1.0)];
        assert_eq!(from_bytes::<f16>(&to_bytes(&h)), h);
        let i = vec![-3i8, 127];
        assert_eq!(from_bytes::<i8>(&to_bytes(&i)), i);
    }

    #[test]
    fn write_f64_rounds_and_saturates() {
        let mut b = vec![0u8; 2];
        DType::F16.write_f64(&mut b, 0, 65520.0);
        assert!(DType::F16.read_f64(&b, 0).is_infinite());
        let mut i = vec![0u8; 1];
        DType::I8.write_f64(&mut i, 0, 300.0);
        assert_eq!(DType::I8.read_f64(&i, 0), 127.0);
    }

    fn via(dt: DType, v: f64) -> f64 {
        let mut b = vec![0u8; dt.size()];
        dt.write_f64(&mut b, 0, v);
        dt.read_f64(&b, 0)
    }

    #[test]
    fn f64_to_bf16_rounds_to_nearest_even_in_one_step() {
        let p = |e: i32| 2f64.powi(e);
        // Above the halfway point between 1 and 1 + 2^-7 by one f32 ulp, and by less than one.
        assert_eq!(via(DType::BF16, 1.0 + p(-8) + p(-23)), 1.0 + p(-7));
        assert_eq!(via(DType::BF16, 1.0 + p(-8) + p(-30)), 1.0 + p(-7));
        // Exact ties go to the even mantissa.
        assert_eq!(via(DType::BF16, 1.0 + p(-8)), 1.0);
        assert_eq!(via(DType::BF16, 1.0 + 3.0 * p(-8)), 1.0 + p(-6));
        assert_eq!(via(DType::BF16, -(1.0 + 3.0 * p(-8))), -(1.0 + p(-6)));
        // Just below a tie rounds down.
        assert_eq!(via(DType::BF16, 1.0 + p(-8) - p(-40)), 1.0);
        // Largest finite value, and the tie above it overflows.
        let max = (2.0 - p(-7)) * p(127);
        assert_eq!(via(DType::BF16, max), max);
        assert!(via(DType::BF16, max + p(119)).is_infinite());
        // Subnormals: the smallest one is 2^-133; half of it ties to zero, a bit more rounds up.
        assert_eq!(via(DType::BF16, p(-133)), p(-133));
        assert_eq!(via(DType::BF16, p(-134)), 0.0);
        assert_eq!(via(DType::BF16, p(-134) + p(-160)), p(-133));
        assert!(via(DType::BF16, f64::NAN).is_nan());
        assert_eq!(via(DType::BF16, f64::NEG_INFINITY), f64::NEG_INFINITY);
        assert!(via(DType::BF16, -0.0).is_sign_negative());
    }

    #[test]
    fn f64_to_f16_rounds_to_nearest_even_in_one_step() {
        let p = |e: i32| 2f64.powi(e);
        assert_eq!(via(DType::F16, 1.0 + p(-11) + p(-23)), 1.0 + p(-10));
        assert_eq!(via(DType::F16, 1.0 + p(-11) + p(-40)), 1.0 + p(-10));
        assert_eq!(via(DType::F16, 1.0 + p(-11)), 1.0);
        assert_eq!(via(DType::F16, 1.0 + 3.0 * p(-11)), 1.0 + p(-9));
        assert_eq!(via(DType::F16, 65504.0), 65504.0);
        assert_eq!(via(DType::F16, 65519.99), 65504.0);
        assert!(via(DType::F16, 65520.0).is_infinite());
        // Subnormals: the smallest is 2^-24.
        assert_eq!(via(DType::F16, p(-24)), p(-24));
        assert_eq!(via(DType::F16, p(-25)), 0.0);
        assert_eq!(via(DType::F16, 3.0 * p(-25)), p(-23));
    }

    #[test]
    fn f64_round_trips_every_exact_value_of_every_dtype() {
        for v in [0.0, 1.0, -2.0, 100.0, -128.0, 127.0] {
            for dt in DType::ALL {
                assert_eq!(via(dt, v), v, "{dt} {v}");
            }
        }
    }
}
