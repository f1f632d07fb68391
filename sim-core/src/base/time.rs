//! Virtual time: integer picoseconds, with conversions from the clock and bandwidth figures
//! that configs give. No floating point is used once a model has been built.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Picoseconds per second.
pub(crate) const PS_PER_S: u64 = 1_000_000_000_000;

/// An instant on the simulated clock, in picoseconds since the start of a run.
#[derive(Copy, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct SimTime(u64);

/// A span of simulated time, in picoseconds.
#[derive(Copy, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct SimDuration(u64);

impl SimTime {
    /// The start of a run.
    pub const ZERO: SimTime = SimTime(0);

    /// The last representable instant (about 213 days): where arithmetic that overflowed the
    /// u64-picosecond clock saturates. Nothing is ever scheduled there.
    pub const NEVER: SimTime = SimTime(u64::MAX);

    /// Whether this instant is where an overflowing sum saturated ([`SimTime::NEVER`]).
    #[inline]
    pub const fn is_overflowed(self) -> bool {
        self.0 == u64::MAX
    }

    /// An instant `ps` picoseconds after the start.
    #[inline]
    pub const fn from_ps(ps: u64) -> Self {
        SimTime(ps)
    }

    /// Picoseconds since the start of the run.
    #[inline]
    pub const fn as_ps(self) -> u64 {
        self.0
    }

    /// Nanoseconds since the start, rounded down (for display and traces).
    #[inline]
    pub const fn as_ns(self) -> u64 {
        self.0 / 1_000
    }

    /// Microseconds as a float, for output only.
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }

    /// Time elapsed since `earlier`; zero if `earlier` is later.
    #[inline]
    pub fn saturating_since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    /// No time at all.
    pub const ZERO: SimDuration = SimDuration(0);

    /// A span of `ps` picoseconds.
    #[inline]
    pub const fn from_ps(ps: u64) -> Self {
        SimDuration(ps)
    }

    /// A span of `ns` nanoseconds (saturating at `u64::MAX` picoseconds).
    #[inline]
    pub const fn from_ns(ns: u64) -> Self {
        SimDuration(ns.saturating_mul(1_000))
    }

    /// A span of `us` microseconds (saturating at `u64::MAX` picoseconds).
    #[inline]
    pub const fn from_us(us: u64) -> Self {
        SimDuration(us.saturating_mul(1_000_000))
    }

    /// Converts a configured nanosecond figure once, rounding up to a whole picosecond.
    /// Negative or non-finite inputs give zero (configs are validated before this point).
    pub fn from_ns_f64(ns: f64) -> Self {
        if !ns.is_finite() || ns <= 0.0 {
            return SimDuration::ZERO;
        }
        SimDuration((ns * 1_000.0).ceil() as u64)
    }

    /// The span in picoseconds.
    #[inline]
    pub const fn as_ps(self) -> u64 {
        self.0
    }

    /// Microseconds as a float, for output only.
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }

    /// The longer of two spans.
    #[inline]
    pub fn max(self, other: SimDuration) -> SimDuration {
        SimDuration(self.0.max(other.0))
    }

    /// `self * n`, saturating.
    #[inline]
    pub fn times(self, n: u64) -> SimDuration {
        SimDuration(self.0.saturating_mul(n))
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    /// Saturates at [`SimTime::NEVER`]: the engine refuses to schedule anything there and
    /// ends the run with an error naming the actor and the event (see
    /// [`SimTime::is_overflowed`]), so an overflow is an error, never a panic or a wrap.
    #[inline]
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}

impl AddAssign<SimDuration> for SimTime {
    #[inline]
    fn add_assign(&mut self, d: SimDuration) {
        *self = *self + d;
    }
}

impl Add for SimDuration {
    type Output = SimDuration;
    /// Saturates at `u64::MAX` picoseconds; a time built from it is [`SimTime::NEVER`], which
    /// the engine reports as an overflow.
    #[inline]
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(d.0))
    }
}

impl AddAssign for SimDuration {
    #[inline]
    fn add_assign(&mut self, d: SimDuration) {
        *self = *self + d;
    }
}

impl Sub for SimTime {
    type Output = SimDuration;
    /// Panics if `rhs` is later than `self`: a negative span is a model bug.
    #[inline]
    fn sub(self, rhs: SimTime) -> SimDuration {
        SimDuration(self.0.checked_sub(rhs.0).expect("negative simulated duration"))
    }
}

fn fmt_ps(ps: u64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if ps.is_multiple_of(1_000_000) {
        write!(f, "{}us", ps / 1_000_000)
    } else if ps.is_multiple_of(1_000) {
        write!(f, "{}ns", ps / 1_000)
    } else {
        write!(f, "{}ps", ps)
    }
}

impl fmt::Debug for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t=")?;
        fmt_ps(self.0, f)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3}us", self.as_us_f64())
    }
}

impl fmt::Debug for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_ps(self.0, f)
    }
}

impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3}us", self.as_us_f64())
    }
}

/// A clock frequency in hertz; converts cycle counts to time, rounding up.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Frequency {
    hz: u64,
}

impl Frequency {
    /// A clock of `hz` hertz. Returns `None` for 0 Hz.
    pub fn from_hz(hz: u64) -> Option<Self> {
        (hz > 0).then_some(Frequency { hz })
    }

    /// Converts a configured GHz figure once (rounded to the nearest hertz).
    pub fn from_ghz_f64(ghz: f64) -> Option<Self> {
        if !ghz.is_finite() || ghz <= 0.0 {
            return None;
        }
        Frequency::from_hz((ghz * 1e9).round() as u64)
    }

    /// The frequency in hertz.
    #[inline]
    pub fn hz(self) -> u64 {
        self.hz
    }

    /// The duration of `cycles` cycles, rounded up to a whole picosecond.
    #[inline]
    pub fn cycles(self, cycles: u64) -> SimDuration {
        SimDuration(ps_div_ceil(cycles, self.hz))
    }
}

/// A data rate in bytes per second; converts byte counts to time, rounding up.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bandwidth {
    bytes_per_s: u64,
}

impl Bandwidth {
    /// A rate of `bytes_per_s` bytes per second. Returns `None` for zero.
    pub fn from_bytes_per_s(bytes_per_s: u64) -> Option<Self> {
        (bytes_per_s > 0).then_some(Bandwidth { bytes_per_s })
    }

    /// Converts a configured GB/s figure (1 GB = 1e9 B) once, rounding to the nearest byte/s.
    pub fn from_gbps_f64(gbps: f64) -> Option<Self> {
        if !gbps.is_finite() || gbps <= 0.0 {
            return None;
        }
        Bandwidth::from_bytes_per_s((gbps * 1e9).round() as u64)
    }

    /// The rate in bytes per second.
    #[inline]
    pub fn bytes_per_s(self) -> u64 {
        self.bytes_per_s
    }

    /// The slower of two rates.
    #[inline]
    pub fn min(self, other: Bandwidth) -> Bandwidth {
        if other.bytes_per_s < self.bytes_per_s { other } else { self }
    }

    /// Time to serialise `bytes` bytes at this rate, rounded up to a whole picosecond.
    #[inline]
    pub fn time_for(self, bytes: u64) -> SimDuration {
        SimDuration(ps_div_ceil(bytes, self.bytes_per_s))
    }
}

/// `ceil(n * PS_PER_S / per_s)` picoseconds, saturated at `u64::MAX`: in 64-bit arithmetic
/// when the product fits (every count below about 1.8e7, so nearly every operation), else in
/// 128-bit; both give the same exact quotient.
#[inline]
fn ps_div_ceil(n: u64, per_s: u64) -> u64 {
    match n.checked_mul(PS_PER_S) {
        Some(p) => p.div_ceil(per_s),
        None => {
            let ps = (n as u128 * PS_PER_S as u128).div_ceil(per_s as u128);
            u64::try_from(ps).unwrap_or(u64::MAX)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_round_up_to_picoseconds() {
        let f = Frequency::from_ghz_f64(1.85).unwrap();
        // 1 cycle at 1.85 GHz = 540.54 ps -> 541 ps.
        assert_eq!(f.cycles(1).as_ps(), 541);
        assert_eq!(f.cycles(1850).as_ps(), 1_000_000);
        assert_eq!(f.cycles(0), SimDuration::ZERO);
    }

    #[test]
    fn bandwidth_rounds_up() {
        let bw = Bandwidth::from_gbps_f64(28.0).unwrap();
        // 1 byte at 28 GB/s = 35.714 ps -> 36 ps; 28 bytes = exactly 1 ns.
        assert_eq!(bw.time_for(1).as_ps(), 36);
        assert_eq!(bw.time_for(28).as_ps(), 1_000);
        assert_eq!(bw.time_for(0), SimDuration::ZERO);
    }

    #[test]
    fn large_counts_convert_exactly_in_wide_arithmetic() {
        let f = Frequency::from_hz(1_850_000_000).unwrap();
        let bw = Bandwidth::from_bytes_per_s(28_000_000_000).unwrap();
        // Around the largest count whose product with 1e12 fits 64 bits, and far beyond.
        for n in [18_446_744, 18_446_745, 1 << 40, u64::MAX / 3] {
            let exact = |per_s: u64| (n as u128 * PS_PER_S as u128).div_ceil(per_s as u128);
            assert_eq!(u128::from(f.cycles(n).as_ps()), exact(1_850_000_000).min(u64::MAX as u128));
            assert_eq!(u128::from(bw.time_for(n).as_ps()), exact(28_000_000_000).min(u64::MAX as u128));
        }
        assert_eq!(Frequency::from_hz(1).unwrap().cycles(u64::MAX).as_ps(), u64::MAX);
    }

    #[test]
    fn zero_rates_are_rejected() {
        assert!(Frequency::from_hz(0).is_none());
        assert!(Bandwidth::from_gbps_f64(0.0).is_none());
        assert!(Bandwidth::from_gbps_f64(f64::NAN).is_none());
    }

    #[test]
    fn debug_picks_the_coarsest_exact_unit() {
        assert_eq!(format!("{:?}", SimDuration::from_ns(5)), "5ns");
        assert_eq!(format!("{:?}", SimDuration::from_ps(1500)), "1500ps");
        assert_eq!(format!("{:?}", SimTime::from_ps(2_000_000)), "t=2us");
    }

    #[test]
    fn ns_from_config_rounds_up() {
        assert_eq!(SimDuration::from_ns_f64(0.5).as_ps(), 500);
        assert_eq!(SimDuration::from_ns_f64(0.0001).as_ps(), 1);
        assert_eq!(SimDuration::from_ns_f64(-3.0), SimDuration::ZERO);
    }
}
