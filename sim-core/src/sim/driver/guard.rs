//! Turning a coroutine's stack overflow into an error instead of a crash.
//!
//! Each coroutine stack has a guard page below it (`stacks.rs`: a page without access, or a
//! hole in the address space). Touching it raises SIGSEGV; on Linux x86-64 a handler (installed once, on the alternate signal stack)
//! checks whether the fault hit the guard page of the coroutine this thread is running, and if
//! so rewrites the interrupted registers so the coroutine returns [`Ended::Overflow`] at once,
//! on a reset stack, without unwinding its frames (their locals are leaked). Any other fault
//! goes to the handler that was installed before (Rust's own, which reports a thread's stack
//! overflow). On other platforms an overflow kills the process with SIGSEGV.
//!
//! This is best effort in one respect: a kernel interrupted while holding a lock of its own
//! thread (inside the allocator, say) never releases it. Overflows in kernel code (deep
//! recursion, large locals) are the case it is for.

use corosensei::Coroutine;
use corosensei::stack::Stack;

/// How a coroutine's body ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Ended {
    /// The kernel returned (or panicked) and posted its result.
    Done,
    /// The kernel overflowed its stack; nothing was posted for it.
    Overflow,
    /// A host's fiber switched back to the driver without a request to wait on (the host's
    /// fiber machinery misbehaved); nothing was posted for it.
    Stray,
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod imp {
    use super::Ended;
    use corosensei::trap::CoroutineTrapHandler;
    use std::cell::Cell;
    use std::sync::OnceLock;

    /// The coroutine this thread runs now: its guard page and its trap handler.
    #[derive(Copy, Clone)]
    pub(super) struct Armed {
        pub(super) guard: (usize, usize),
        pub(super) trap: CoroutineTrapHandler<Ended>,
    }

    thread_local! {
        /// Read by the signal handler: a const-initialised cell without destructor, so the
        /// access is a plain thread-local load (async-signal-safe).
        pub(super) static ARMED: Cell<Option<Armed>> = const { Cell::new(None) };
    }

    /// The SIGSEGV action before ours, to pass on faults that are not a coroutine's overflow.
    static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

    /// Installs the handler once per process.
    pub(super) fn install() {
        PREVIOUS.get_or_init(|| {
            // SAFETY: plain data structures for sigaction; `on_fault` has the SA_SIGINFO
            // signature.
            unsafe {
                let mut new: libc::sigaction = std::mem::zeroed();
                new.sa_sigaction = on_fault as *const () as usize;
                new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut new.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                libc::sigaction(libc::SIGSEGV, &new, &mut old);
                old
            }
        });
    }

    /// The SIGSEGV handler.
    unsafe extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid siginfo and ucontext to an SA_SIGINFO handler.
        unsafe {
            let addr = (*info).si_addr() as usize;
            if let Some(a) = ARMED.get() {
                let uc = ctx.cast::<libc::ucontext_t>();
                let gregs = &mut (*uc).uc_mcontext.gregs;
                let sp = gregs[libc::REG_RSP as usize] as usize;
                if addr >= a.guard.0 && addr < a.guard.1 && a.trap.stack_ptr_in_bounds(sp) {
                    ARMED.set(None);
                    // The fault is the running coroutine's overflow: resume it on its reset
                    // stack in a function that returns `Overflow` to the driver.
                    let regs = a.trap.setup_trap_handler(|| Ended::Overflow);
                    gregs[libc::REG_RIP as usize] = regs.rip as i64;
                    gregs[libc::REG_RSP as usize] = regs.rsp as i64;
                    gregs[libc::REG_RBP as usize] = regs.rbp as i64;
                    gregs[libc::REG_RDI as usize] = regs.rdi as i64;
                    gregs[libc::REG_RSI as usize] = regs.rsi as i64;
                    return;
                }
            }
            let Some(prev) = PREVIOUS.get() else { return };
            let h = prev.sa_sigaction;
            if h == libc::SIG_DFL || h == libc::SIG_IGN {
                // Put the old action back: the faulting instruction runs again and faults
                // with the default action.
                libc::sigaction(sig, prev, std::ptr::null_mut());
            } else if prev.sa_flags & libc::SA_SIGINFO != 0 {
                let f: unsafe extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                    std::mem::transmute(h);
                f(sig, info, ctx);
            } else {
                let f: unsafe extern "C" fn(libc::c_int) = std::mem::transmute(h);
                f(sig);
            }
        }
    }

    /// An alternate signal stack this driver set up for its thread (the handler cannot run on
    /// the overflowed stack), removed when dropped.
    pub(crate) struct AltStack(Option<(*mut libc::c_void, usize)>);

    impl AltStack {
        /// Makes sure this thread has an alternate signal stack (Rust threads normally do).
        pub(super) fn ensure() -> AltStack {
            // SAFETY: sigaltstack with a null new stack only reads the current one; a new one
            // is a fresh private mapping of `len` bytes, unmapped in `drop`.
            unsafe {
                let mut cur: libc::stack_t = std::mem::zeroed();
                if libc::sigaltstack(std::ptr::null(), &mut cur) != 0 || cur.ss_flags & libc::SS_DISABLE == 0 {
                    return AltStack(None);
                }
                let len = libc::SIGSTKSZ.max(64 * 1024);
                let p = libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                );
                if p == libc::MAP_FAILED {
                    return AltStack(None);
                }
                let st = libc::stack_t { ss_sp: p, ss_flags: 0, ss_size: len };
                if libc::sigaltstack(&st, std::ptr::null_mut()) != 0 {
                    libc::munmap(p, len);
                    return AltStack(None);
                }
                AltStack(Some((p, len)))
            }
        }
    }

    impl Drop for AltStack {
        fn drop(&mut self) {
            if let Some((p, len)) = self.0 {
                // SAFETY: the stack was set up by `ensure` on this thread (the driver never
                // moves it); it is disabled before being unmapped.
                unsafe {
                    let off = libc::stack_t { ss_sp: std::ptr::null_mut(), ss_flags: libc::SS_DISABLE, ss_size: 0 };
                    libc::sigaltstack(&off, std::ptr::null_mut());
                    libc::munmap(p, len);
                }
            }
        }
    }
}

/// What [`prepare`] set up for one run; dropping it undoes what is per-thread.
pub(super) struct Prepared {
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    _alt: imp::AltStack,
}

/// Installs the overflow handler (once per process) and makes sure this thread can run it.
pub(super) fn prepare() -> Prepared {
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    {
        imp::install();
        Prepared { _alt: imp::AltStack::ensure() }
    }
    #[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
    Prepared {}
}

/// The guard page below a coroutine stack: `[lo, hi)`.
#[derive(Copy, Clone, Debug)]
pub(super) struct GuardPage {
    #[cfg_attr(not(all(target_os = "linux", target_arch = "x86_64")), allow(dead_code))]
    lo: usize,
    #[cfg_attr(not(all(target_os = "linux", target_arch = "x86_64")), allow(dead_code))]
    hi: usize,
}

impl GuardPage {
    /// The guard page of `stack`: its lowest page, mapped without access or not at all.
    pub(super) fn of(stack: &impl Stack) -> GuardPage {
        let lo = stack.limit().get();
        GuardPage { lo, hi: lo + page_size() }
    }
}

/// The host's page size (read once).
pub(super) fn page_size() -> usize {
    static PAGE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *PAGE.get_or_init(|| {
        // SAFETY: sysconf has no preconditions.
        let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        usize::try_from(p).unwrap_or(4096).max(4096)
    })
}

/// Runs `f` (a resumption of `coro`, whose stack has `guard`) with an overflow of that stack
/// turned into [`Ended::Overflow`].
#[inline]
pub(super) fn armed<I, Y, S: Stack, R>(
    guard: GuardPage,
    coro: &mut Coroutine<I, Y, Ended, S>,
    f: impl FnOnce(&mut Coroutine<I, Y, Ended, S>) -> R,
) -> R {
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    {
        let outer = imp::ARMED.replace(Some(imp::Armed { guard: (guard.lo, guard.hi), trap: coro.trap_handler() }));
        let r = f(coro);
        // A run nested in a kernel restores the outer coroutine's guard.
        imp::ARMED.set(outer);
        r
    }
    #[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
    {
        let _ = guard;
        f(coro)
    }
}
