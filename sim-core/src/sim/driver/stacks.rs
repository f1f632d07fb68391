//! Coroutine stacks and the memory mappings they cost.
//!
//! A stack needs a guard below it so that an overflow faults instead of running into other
//! memory. corosensei's `DefaultStack` guards with a page mapped without access: two memory
//! mappings a stack (the stack and the guard), so Linux's default limit of 65530 mappings a
//! process would stop a run at about 32 000 live blocks. A run's first [`GUARDED`] stacks are
//! those; after that, stacks come from slabs of [`SLAB`]: one mapping cut into stacks by
//! unmapping the page below each, so the guard is a hole in the address space and a stack
//! costs one mapping. A hole faults like a guard page, but a later, unrelated one-page
//! mapping of the process could be placed in it (nothing here maps one page), which is why
//! the guarded kind comes first and serves every run of fewer blocks.

use corosensei::stack::{DefaultStack, Stack, StackPointer};
use std::io;

/// Stacks one run maps with a guard page before it turns to holes.
pub(super) const GUARDED: u64 = 8192;

/// The largest stack mapped (4 GiB): larger sizes are refused, not rounded past `usize`.
const MAX_STACK: usize = 1 << 32;

/// Stacks one slab mapping is cut into.
const SLAB: usize = 64;

/// A coroutine stack of either kind.
pub(super) enum KernelStack {
    /// Guarded by a page without access.
    Guarded(DefaultStack),
    /// Guarded by an unmapped page.
    Holed(HoledStack),
}

// SAFETY: both kinds describe a mapped, writable region `[limit + guard, base)` that lives as
// long as the value and is used by one coroutine at a time.
unsafe impl Stack for KernelStack {
    #[inline]
    fn base(&self) -> StackPointer {
        match self {
            KernelStack::Guarded(s) => s.base(),
            KernelStack::Holed(s) => s.base(),
        }
    }

    #[inline]
    fn limit(&self) -> StackPointer {
        match self {
            KernelStack::Guarded(s) => s.limit(),
            KernelStack::Holed(s) => s.limit(),
        }
    }
}

/// A stack cut from a slab: `[lo, lo + page)` is the unmapped hole below it, `[lo + page,
/// lo + len)` the stack, which it unmaps when dropped.
pub(super) struct HoledStack {
    lo: usize,
    len: usize,
    page: usize,
}

// SAFETY: `lo + len` is the top of this value's own mapping (nonzero, aligned to pages).
unsafe impl Stack for HoledStack {
    #[inline]
    fn base(&self) -> StackPointer {
        StackPointer::new(self.lo + self.len).unwrap_or(StackPointer::MIN)
    }

    #[inline]
    fn limit(&self) -> StackPointer {
        StackPointer::new(self.lo).unwrap_or(StackPointer::MIN)
    }
}

impl Drop for HoledStack {
    fn drop(&mut self) {
        // SAFETY: the region is this stack's own (the hole below it was unmapped when it was
        // cut; unmapping only its part never touches a mapping placed in the hole since).
        unsafe {
            libc::munmap((self.lo + self.page) as *mut libc::c_void, self.len - self.page);
        }
    }
}

/// Maps stacks of one size: guarded ones, or holed ones cut from slabs.
pub(super) struct StackMaker {
    size: usize,
    page: usize,
    /// Holed stacks cut and not handed out yet.
    spare: Vec<HoledStack>,
}

impl StackMaker {
    /// A maker of stacks of at least `size` usable bytes.
    pub(super) fn new(size: usize, page: usize) -> StackMaker {
        StackMaker { size: size.max(corosensei::stack::MIN_STACK_SIZE), page, spare: Vec::new() }
    }

    /// A new stack: with a guard page while `guarded`, else with a hole below it.
    pub(super) fn make(&mut self, guarded: bool) -> io::Result<KernelStack> {
        if self.size > MAX_STACK {
            return Err(io::Error::other(format!("a stack may have at most {MAX_STACK} bytes")));
        }
        if guarded {
            return DefaultStack::new(self.size).map(KernelStack::Guarded);
        }
        if self.spare.is_empty() {
            self.cut_slab()?;
        }
        self.spare.pop().map(KernelStack::Holed).ok_or_else(|| io::Error::other("no stack was cut"))
    }

    /// Maps a slab and cuts it into [`SLAB`] stacks, each with the page below it unmapped.
    fn cut_slab(&mut self) -> io::Result<()> {
        let slot = self.size.div_ceil(self.page) * self.page + self.page;
        let total = slot.checked_mul(SLAB).ok_or_else(|| io::Error::other("stack size too large"))?;
        // SAFETY: a fresh anonymous private mapping; every page of it is either unmapped
        // below or owned by exactly one `HoledStack`, which unmaps it.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                total,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            );
            if p == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            let base = p as usize;
            for i in 0..SLAB {
                let lo = base + i * slot;
                if libc::munmap(lo as *mut libc::c_void, self.page) != 0 {
                    let e = io::Error::last_os_error();
                    // Nothing of this slot or the ones above is handed out: unmap them.
                    libc::munmap(lo as *mut libc::c_void, total - i * slot);
                    return if self.spare.is_empty() { Err(e) } else { Ok(()) };
                }
                self.spare.push(HoledStack { lo, len: slot, page: self.page });
            }
        }
        Ok(())
    }
}

#[cfg(all(test, target_os = "linux", target_arch = "x86_64"))]
mod tests {
    use super::super::guard::{self, Ended, GuardPage};
    use super::*;
    use corosensei::{Coroutine, CoroutineResult};

    /// Recurses `depth` frames of about 4 KiB.
    fn deep(depth: u64) -> u64 {
        let frame = std::hint::black_box([depth; 512]);
        if depth == 0 { frame[1] } else { deep(depth - 1).wrapping_add(frame[3]) }
    }

    /// Runs `depth` frames on `stack`: `Ok(value)` or the overflow.
    fn run_on(stack: KernelStack, depth: u64) -> (Result<u64, Ended>, KernelStack) {
        let guard = GuardPage::of(&stack);
        let mut co: Coroutine<(), u64, Ended, KernelStack> = Coroutine::with_stack(stack, move |y, ()| {
            y.suspend(deep(depth));
            Ended::Done
        });
        let _prepared = guard::prepare();
        let r = match guard::armed(guard, &mut co, |c| c.resume(())) {
            CoroutineResult::Yield(v) => {
                let _ = guard::armed(guard, &mut co, |c| c.resume(()));
                Ok(v)
            }
            CoroutineResult::Return(e) => Err(e),
        };
        (r, co.into_stack())
    }

    #[test]
    fn both_kinds_of_stack_run_code_and_turn_an_overflow_into_an_error() {
        let page = guard::page_size();
        let mut maker = StackMaker::new(64 * 1024, page);
        for guarded in [true, false] {
            let stack = maker.make(guarded).expect("a stack");
            assert_eq!(matches!(stack, KernelStack::Guarded(_)), guarded);
            let (small, stack) = run_on(stack, 4);
            assert_eq!(small, Ok(deep(4)), "guarded {guarded}");
            let (big, stack) = run_on(stack, 1000);
            assert_eq!(big, Err(Ended::Overflow), "guarded {guarded}");
            // The stack is still good after the overflow.
            let (again, _) = run_on(stack, 4);
            assert_eq!(again, Ok(deep(4)), "guarded {guarded}");
        }
        // A slab's stacks are all distinct, each with its own hole below it.
        let stacks: Vec<KernelStack> = (0..SLAB + 3).map(|_| maker.make(false).expect("a holed stack")).collect();
        assert!(stacks.iter().all(|s| matches!(s, KernelStack::Holed(_))));
        let mut tops: Vec<usize> = stacks.iter().map(|s| s.base().get()).collect();
        tops.sort_unstable();
        tops.dedup();
        assert_eq!(tops.len(), SLAB + 3);
    }
}
