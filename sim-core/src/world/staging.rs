//! GM tensors and the host's staging: writing data into a buffer before a run and reading it
//! back after, typed, as f64 or as raw bytes.

use super::MAX_BUFFER_BYTES;
use super::World;
use crate::base::addr::MemKey;
use crate::base::dtype::{DType, Element, encode, from_bytes};
use crate::base::error::{SimError, SimResult};
use crate::base::tensor::{Runs, Space, Tensor, TensorMeta, resolve_region};
use std::sync::Arc;

impl World {
    /// Allocates a zeroed GM tensor on every chip; each chip's kernels see their own copy.
    pub fn alloc_tensor(&mut self, name: &str, dtype: DType, shape: &[usize]) -> SimResult<Tensor> {
        let nbytes = check_shape(name, dtype, shape)?;
        let buf = self.gm_names.len();
        self.gm_names.push(name.to_string());
        self.gm_bytes.push(nbytes);
        self.gm_written.push(vec![false; self.size]);
        self.mem.add_gm(nbytes, self.size);
        Ok(Tensor(Arc::new(TensorMeta::dense(name.into(), Space::Gm { buf }, 0, nbytes, dtype, shape))))
    }

    /// Copies host data into rank `rank`'s copy of `t` (the dense domain rank for a window,
    /// the world rank for a GM tensor). `data` must fill the whole view.
    pub fn write<T: Element>(&mut self, t: &Tensor, rank: usize, data: &[T]) -> SimResult<()> {
        self.check_host_io("write", t, rank, T::DTYPE, data.len())?;
        self.prepare(t);
        if let Space::Gm { buf } = &t.0.space {
            self.gm_written[*buf][rank] = true;
        }
        // Encoded straight into simulated memory, run by run: no staging copy.
        let (size, mut at) = (T::DTYPE.size(), 0);
        for &(off, len) in &World::runs(t) {
            if let Some(dst) = self.mem.host_bytes_mut(mem_key(t, rank), off, len) {
                encode(&data[at / size..(at + len) / size], dst);
            }
            at += len;
        }
        Ok(())
    }

    /// Records that the host staged rank `rank`'s copy of `t` without values, as a timing-only
    /// run does (it keeps none): a task that reads `t` then needs no producer, as after
    /// [`World::write`]. An error when the world keeps payload (write the values instead).
    pub fn mark_staged(&mut self, t: &Tensor, rank: usize) -> SimResult<()> {
        if self.has_payload() {
            return Err(SimError::invalid(format!(
                "mark_staged of `{}`: this world keeps values; write them (World::write)",
                t.name()
            )));
        }
        self.check_host_io("write", t, rank, t.dtype(), t.numel())?;
        if let Space::Gm { buf } = &t.0.space {
            self.gm_written[*buf][rank] = true;
        }
        Ok(())
    }

    /// Copies rank `rank`'s copy of `t` back to the host.
    pub fn read<T: Element>(&self, t: &Tensor, rank: usize) -> SimResult<Vec<T>> {
        self.check_host_io("read", t, rank, T::DTYPE, t.numel())?;
        Ok(from_bytes(&self.host_read(t, rank)))
    }

    /// As [`World::write`], with values given as f64 and converted to `t`'s dtype (floats
    /// rounded to nearest, integers saturated): for code generic over dtypes.
    pub fn write_f64(&mut self, t: &Tensor, rank: usize, data: &[f64]) -> SimResult<()> {
        let dt = t.dtype();
        self.check_host_io("write", t, rank, dt, data.len())?;
        self.prepare(t);
        let mut bytes = vec![0u8; data.len() * dt.size()];
        for (i, &v) in data.iter().enumerate() {
            dt.write_f64(&mut bytes, i, v);
        }
        self.host_write(t, rank, &bytes);
        Ok(())
    }

    /// As [`World::read`], every element converted to f64 (exact for every dtype).
    pub fn read_f64(&self, t: &Tensor, rank: usize) -> SimResult<Vec<f64>> {
        let dt = t.dtype();
        self.check_host_io("read", t, rank, dt, t.numel())?;
        let bytes = self.host_read(t, rank);
        Ok((0..t.numel()).map(|i| dt.read_f64(&bytes, i)).collect())
    }

    /// As [`World::write`], from raw little-endian bytes of `t`'s dtype (`t.nbytes()` of
    /// them): for host code generic over dtypes that encodes its values itself.
    pub fn write_bytes(&mut self, t: &Tensor, rank: usize, bytes: &[u8]) -> SimResult<()> {
        let dt = t.dtype();
        if !bytes.len().is_multiple_of(dt.size()) {
            return Err(SimError::invalid(format!(
                "host write of `{}`: {} bytes is not a whole number of {dt} elements",
                t.name(),
                bytes.len()
            )));
        }
        self.check_host_io("write", t, rank, dt, bytes.len() / dt.size())?;
        self.prepare(t);
        self.host_write(t, rank, bytes);
        Ok(())
    }

    /// As [`World::read`], as raw little-endian bytes of `t`'s dtype.
    pub fn read_bytes(&self, t: &Tensor, rank: usize) -> SimResult<Vec<u8>> {
        self.check_host_io("read", t, rank, t.dtype(), t.numel())?;
        Ok(self.host_read(t, rank))
    }

    /// As [`World::read_bytes`], into `out`, which must hold exactly `t.nbytes()` bytes: a
    /// host buffer of the caller's (a numpy array's) filled with no buffer in between.
    pub fn read_bytes_into(&self, t: &Tensor, rank: usize, out: &mut [u8]) -> SimResult<()> {
        let dt = t.dtype();
        if out.len() != t.nbytes() {
            return Err(SimError::invalid(format!(
                "host read of `{}`: a {}-byte buffer given, the tensor holds {} bytes",
                t.name(),
                out.len(),
                t.nbytes()
            )));
        }
        self.check_host_io("read", t, rank, dt, t.numel())?;
        let mut at = 0;
        for &(off, len) in &World::runs(t) {
            self.mem.host_read_into(mem_key(t, rank), off, &mut out[at..at + len]);
            at += len;
        }
        Ok(())
    }

    /// Lends rank `rank`'s copy of GM tensor `t` the host's own `len` bytes at `bytes` (the
    /// tensor's elements, little-endian, row-major) until [`World::end_loans`]: staging an
    /// input and reading an output back then copy nothing, as the host's buffer is that copy.
    /// A `writable` loan is written in place by the kernels (an output the host reads back:
    /// its bytes are the results as the run leaves them); a read-only one gets a copy of its own
    /// at the first write, so the host's bytes stay as they were. `t` must be a whole GM
    /// buffer; the copy counts as staged (as after [`World::write`]). Timing-only worlds keep no
    /// bytes and only note the staging.
    ///
    /// # Safety
    /// `bytes` must point to `len` bytes that stay valid until [`World::end_loans`] is called
    /// or the world is dropped, and that nothing else writes (nor reads, for a `writable`
    /// loan) while a run goes on.
    pub unsafe fn lend(
        &mut self,
        t: &Tensor,
        rank: usize,
        bytes: *mut u8,
        len: usize,
        writable: bool,
    ) -> SimResult<()> {
        let Space::Gm { buf } = &t.0.space else {
            return Err(SimError::invalid(format!(
                "lend of `{}`: only a GM tensor can take the host's buffer",
                t.name()
            )));
        };
        self.check_host_io("write", t, rank, t.dtype(), t.numel())?;
        if World::runs(t)[..] != [(0, self.gm_bytes[*buf])] || len != t.nbytes() {
            return Err(SimError::invalid(format!(
                "lend of `{}`: a loan covers a whole GM buffer ({} bytes), not a view of it or {len} bytes",
                t.name(),
                self.gm_bytes[*buf]
            )));
        }
        self.gm_written[*buf][rank] = true;
        // SAFETY: the caller's promise, passed on.
        unsafe { self.mem.lend(*buf, rank, bytes, len, writable) };
        Ok(())
    }

    /// Ends every loan of [`World::lend`]: the host's buffers are the host's alone again, and
    /// each lent copy reads as zeros until written.
    pub fn end_loans(&mut self) {
        self.mem.end_loans();
    }

    /// The byte runs of the whole view `t` (one for a dense tensor, one per row of a slice).
    fn runs(t: &Tensor) -> Runs {
        let zeros = vec![0; t.shape().len()];
        resolve_region(t, &zeros, t.shape()).map_or_else(|_| Runs::one(t.0.base, t.nbytes()), |r| r.runs)
    }

    /// Writes `bytes` (the view's elements in row-major order) into rank `rank`'s copy of `t`.
    fn host_write(&mut self, t: &Tensor, rank: usize, bytes: &[u8]) {
        if let Space::Gm { buf } = &t.0.space {
            self.gm_written[*buf][rank] = true;
        }
        let mut at = 0;
        for &(off, len) in &World::runs(t) {
            self.mem.host_write(mem_key(t, rank), off, &bytes[at..at + len]);
            at += len;
        }
    }

    /// Reads rank `rank`'s copy of the view `t`, its elements in row-major order.
    fn host_read(&self, t: &Tensor, rank: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(t.nbytes());
        for &(off, len) in &World::runs(t) {
            self.mem.host_read(mem_key(t, rank), off, len, &mut out);
        }
        out
    }

    /// An error unless a host `what` (read or write) of `len` `dtype` elements on `rank` fits `t`
    /// and its domain is live.
    fn check_host_io(&self, what: &str, t: &Tensor, rank: usize, dtype: DType, len: usize) -> SimResult<()> {
        if let Space::Window { domain } = &t.0.space {
            self.check_live(domain, || format!("host {what} of window `{}`", t.name()))?;
        }
        if dtype != t.dtype() {
            return Err(SimError::invalid(format!(
                "host {what} of `{}` with {dtype} data, but the tensor is {}",
                t.name(),
                t.dtype()
            )));
        }
        if len != t.numel() {
            return Err(SimError::invalid(format!(
                "host {what} of `{}`: {len} elements given, the tensor {:?} holds {}",
                t.name(),
                t.shape(),
                t.numel()
            )));
        }
        let n = match &t.0.space {
            Space::Gm { .. } => self.size,
            Space::Window { domain } => domain.size(),
        };
        if rank >= n {
            return Err(SimError::invalid(format!(
                "host {what} of `{}` on rank {rank}, but it exists on ranks 0..={}",
                t.name(),
                n - 1
            )));
        }
        Ok(())
    }
}

/// The memory holding rank `rank`'s copy of `t`.
fn mem_key(t: &Tensor, rank: usize) -> MemKey {
    match &t.0.space {
        Space::Gm { buf } => MemKey::gm(*buf, rank),
        Space::Window { domain } => MemKey::win(domain.id, rank, domain.members[rank]),
    }
}

/// The byte size of a buffer of `dtype` and `shape`: positive dimensions, and a size that fits
/// the address space ([`MAX_BUFFER_BYTES`]) without overflowing.
pub(super) fn check_shape(name: &str, dtype: DType, shape: &[usize]) -> SimResult<usize> {
    if shape.is_empty() || shape.contains(&0) {
        return Err(SimError::invalid(format!(
            "buffer `{name}`: shape {shape:?} must be non-empty with positive dimensions"
        )));
    }
    shape
        .iter()
        .try_fold(dtype.size(), |n, &d| n.checked_mul(d))
        .filter(|&n| n <= MAX_BUFFER_BYTES)
        .ok_or_else(|| {
            SimError::invalid(format!(
                "buffer `{name}`: {dtype} {shape:?} is more than {MAX_BUFFER_BYTES} bytes (2^48), the most one buffer may hold"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::engine::testkit::{TestChip, TestNet};

    #[test]
    fn read_bytes_into_fills_the_callers_buffer_run_by_run() {
        let mut world = World::new(2, Arc::new(TestChip), Box::new(TestNet)).expect("a world of 2");
        let t = world.alloc_tensor("t", DType::I16, &[3, 4]).expect("a tensor");
        let vals: Vec<i16> = (0..12).map(|i| i * 7 - 30).collect();
        world.write(&t, 1, &vals).expect("written");
        // A slice of two rows' middle columns: two runs, read back in row-major order.
        let s = t.slice(&[1, 1], &[2, 2]).expect("a slice");
        let mut out = vec![0xAA; s.nbytes()];
        world.read_bytes_into(&s, 1, &mut out).expect("read");
        assert_eq!(out, world.read_bytes(&s, 1).expect("read"));
        assert_eq!(from_bytes::<i16>(&out), vec![vals[5], vals[6], vals[9], vals[10]]);
        // Rank 0 was never written: zeros.
        world.read_bytes_into(&s, 0, &mut out).expect("read");
        assert!(out.iter().all(|&b| b == 0));
        let mut short = vec![0; s.nbytes() - 1];
        let err = world.read_bytes_into(&s, 1, &mut short).expect_err("a short buffer");
        assert!(err.to_string().contains("a 7-byte buffer given, the tensor holds 8 bytes"), "{err}");
        assert!(world.read_bytes_into(&s, 2, &mut out).is_err(), "rank 2 does not exist");
    }

    #[test]
    fn a_lent_buffer_is_the_copy_until_the_loan_ends() {
        let mut world = World::new(2, Arc::new(TestChip), Box::new(TestNet)).expect("a world of 2");
        let t = world.alloc_tensor("t", DType::I32, &[2, 2]).expect("a tensor");
        let mut input: Vec<u8> = [5i32, -6, 7, 8].iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut output = vec![0u8; 16];
        // SAFETY: both vectors outlive the loans (ended below) and are untouched meanwhile.
        unsafe {
            world.lend(&t, 0, input.as_mut_ptr(), 16, false).expect("lent");
            world.lend(&t, 1, output.as_mut_ptr(), 16, true).expect("lent");
        }
        assert_eq!(world.read::<i32>(&t, 0).expect("read"), vec![5, -6, 7, 8]);
        // Host writes go where a run's would: a read-only loan gets a copy of its own.
        world.write(&t, 0, &[1i32, 2, 3, 4]).expect("written");
        world.write(&t, 1, &[9i32, 9, 9, 9]).expect("written");
        assert_eq!(world.read::<i32>(&t, 0).expect("read"), vec![1, 2, 3, 4]);
        // Reading the writable loan back into the lent buffer itself copies nothing.
        let mut back = vec![0u8; 16];
        world.read_bytes_into(&t, 1, &mut back).expect("read");
        world.end_loans();
        assert_eq!(from_bytes::<i32>(&input), vec![5, -6, 7, 8], "the input is as the host lent it");
        assert_eq!(from_bytes::<i32>(&output), vec![9, 9, 9, 9], "the output was written in place");
        assert_eq!(back, output);
        assert_eq!(world.read::<i32>(&t, 1).expect("read"), vec![0; 4], "an ended loan reads zeros");
        let view = t.slice(&[0, 0], &[1, 2]).expect("a view");
        let err = unsafe { world.lend(&view, 0, output.as_mut_ptr(), 8, true) }.expect_err("a view");
        assert!(err.to_string().contains("whole GM buffer"), "{err}");
    }
}
