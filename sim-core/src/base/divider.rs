//! Division by a number fixed for a whole run (the cores per chip) as one multiply: the event
//! loop turns actor numbers into chips on most events, and a hardware division takes tens of
//! cycles where a multiply takes three or four.

/// Divides by `d` with a precomputed reciprocal: exact for every dividend below 2^32 (larger
/// ones take the hardware division). The method is Lemire, Kaser and Kurz's ("Faster
/// remainder by direct computation", Software: Practice and Experience, 2019): with
/// `m = floor((2^64 - 1) / d) + 1`, `n / d` is the high word of `m * n` for any 32-bit `n`.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Divider {
    d: usize,
    /// The reciprocal; 0 for `d = 1` (the quotient is `n` itself).
    m: u64,
}

impl Divider {
    /// A divider by `d` (at least 1; 0 is taken as 1).
    pub(crate) fn new(d: usize) -> Divider {
        let d = d.max(1);
        let m = match u64::try_from(d) {
            Ok(1) | Err(_) => 0,
            Ok(d) => u64::MAX / d + 1,
        };
        Divider { d, m }
    }

    /// `n / d`.
    #[inline]
    pub(crate) fn div(self, n: usize) -> usize {
        match u32::try_from(n) {
            Ok(small) if self.m != 0 => ((u128::from(self.m) * u128::from(small)) >> 64) as usize,
            _ => n / self.d,
        }
    }

    /// `(n / d, n % d)`.
    #[inline]
    pub(crate) fn div_rem(self, n: usize) -> (usize, usize) {
        let q = self.div(n);
        (q, n - q * self.d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every divisor up to 300 (a chip's cores and more) and the largest 32-bit ones, against
    /// the hardware division, over small dividends, dividends near multiples of the divisor,
    /// the top of the 32-bit range and past it.
    #[test]
    fn it_divides_as_the_hardware_does() {
        let big = [u32::MAX as usize - 1, u32::MAX as usize, 1 << 31, (1 << 31) + 1];
        let divisors = (1..=300).chain([65_535, 65_536, 1 << 24, u32::MAX as usize - 1, u32::MAX as usize]);
        for d in divisors {
            let div = Divider::new(d);
            let mut ns: Vec<usize> = (0..2000).collect();
            for k in [1usize, 7, 1000, 1 << 20] {
                let base = k.saturating_mul(d);
                ns.extend([base.saturating_sub(1), base, base + 1]);
            }
            ns.extend(big);
            ns.extend([u32::MAX as usize + 1, usize::MAX]);
            for n in ns {
                assert_eq!(div.div_rem(n), (n / d, n % d), "{n} / {d}");
            }
        }
        assert_eq!(Divider::new(0).div(7), 7, "0 is taken as 1");
    }
}
