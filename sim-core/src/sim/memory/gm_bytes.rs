//! One chip's bytes of a GM buffer: the world's own, or the host's own buffer lent for a call
//! ([`crate::World::lend`]), so that staging an input and reading an output back copy nothing.

/// One chip's bytes of a GM buffer.
#[derive(Debug)]
pub(crate) enum GmBytes {
    /// The world's own allocation.
    Own(Vec<u8>),
    /// A host buffer lent to the world.
    Lent(Lent),
}

/// A host buffer lent to the world: where it is, how long, and whether kernels may write it
/// in place (an output the host reads back) or, written, first get a copy of their own (an
/// input, which the host keeps as it was).
#[derive(Debug)]
pub(crate) struct Lent {
    ptr: *mut u8,
    len: usize,
    writable: bool,
}

// SAFETY: a loan is made through the unsafe `World::lend`, whose caller promises that the
// buffer stays valid and that nothing else touches it until the loan ends; the world uses it
// as it uses its own bytes (one thread at a time, through `&` / `&mut` of the memory).
unsafe impl Send for Lent {}
// SAFETY: as above: shared access only reads.
unsafe impl Sync for Lent {}

impl Default for GmBytes {
    fn default() -> GmBytes {
        GmBytes::Own(Vec::new())
    }
}

impl GmBytes {
    /// A loan of `len` bytes at `ptr`.
    ///
    /// # Safety
    /// As [`crate::World::lend`]: the bytes stay valid, and untouched by anything else, until
    /// the loan ends.
    pub(crate) unsafe fn lent(ptr: *mut u8, len: usize, writable: bool) -> GmBytes {
        GmBytes::Lent(Lent { ptr, len, writable })
    }

    /// The bytes.
    pub(crate) fn get(&self) -> &[u8] {
        match self {
            GmBytes::Own(v) => v,
            // SAFETY: the lender keeps `len` bytes at `ptr` valid for the loan (see `lent`).
            GmBytes::Lent(l) => unsafe { std::slice::from_raw_parts(l.ptr, l.len) },
        }
    }

    /// The bytes, to write: a read-only loan becomes a copy of its own first.
    pub(crate) fn get_mut(&mut self) -> &mut [u8] {
        if let GmBytes::Lent(l) = self
            && !l.writable
        {
            *self = GmBytes::Own(self.get().to_vec());
        }
        match self {
            GmBytes::Own(v) => v,
            // SAFETY: a writable loan's bytes are the world's alone for the loan (see `lent`).
            GmBytes::Lent(l) => unsafe { std::slice::from_raw_parts_mut(l.ptr, l.len) },
        }
    }

    /// Whether these are the lent bytes starting at `ptr` (the lender's own buffer).
    pub(crate) fn is_lent_at(&self, ptr: *const u8) -> bool {
        matches!(self, GmBytes::Lent(l) if std::ptr::eq(l.ptr, ptr))
    }

    /// Ends a loan: the bytes go back to the host, and this copy is zeros again (a fresh
    /// allocation the OS maps only when touched).
    pub(crate) fn end_loan(&mut self, zeroed: impl FnOnce(usize) -> Vec<u8>) {
        if let GmBytes::Lent(l) = self {
            *self = GmBytes::Own(zeroed(l.len));
        }
    }
}

/// A copy is the world's own (a split run's partition, a checker's snapshot): it never
/// aliases the host's buffer.
impl Clone for GmBytes {
    fn clone(&self) -> GmBytes {
        GmBytes::Own(self.get().to_vec())
    }
}

impl serde::Serialize for GmBytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.get().serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for GmBytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<GmBytes, D::Error> {
        Vec::<u8>::deserialize(d).map(GmBytes::Own)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_only_loan_is_copied_before_a_write_and_a_writable_one_is_written_in_place() {
        let mut host = vec![1u8, 2, 3, 4];
        // SAFETY: `host` outlives both loans and is not touched while they last.
        let mut ro = unsafe { GmBytes::lent(host.as_mut_ptr(), 4, false) };
        assert_eq!(ro.get(), &[1, 2, 3, 4]);
        assert!(ro.is_lent_at(host.as_ptr()));
        ro.get_mut()[0] = 9;
        assert!(!ro.is_lent_at(host.as_ptr()), "written, it is a copy of its own");
        assert_eq!(ro.get(), &[9, 2, 3, 4]);
        let mut rw = unsafe { GmBytes::lent(host.as_mut_ptr(), 4, true) };
        rw.get_mut()[1] = 7;
        let copy = rw.clone();
        rw.end_loan(|n| vec![0; n]);
        assert_eq!(rw.get(), &[0, 0, 0, 0], "an ended loan reads zeros");
        assert!(!copy.is_lent_at(host.as_ptr()), "a clone never aliases the host");
        assert_eq!(copy.get(), &[1, 7, 3, 4]);
        assert_eq!(host, vec![1, 7, 3, 4], "the writable loan wrote the host's bytes; the read-only one did not");
    }
}
