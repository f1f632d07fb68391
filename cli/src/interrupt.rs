//! Ctrl-C and SIGTERM: the first ends the runs in progress between two events (every run the
//! command line makes watches one process-wide flag, `RunOptions::interrupt`), the command
//! prints what it has and exits 130; a second one ends the process at once (the default
//! action, restored by the first).

use sim_core::Interrupt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};

/// The flag the handler raises: a static, so the handler only stores to it.
static RAISED: LazyLock<Arc<AtomicBool>> = LazyLock::new(|| Arc::new(AtomicBool::new(false)));

/// A raw pointer to the flag for the handler (set before the handler is installed).
static FLAG: std::sync::atomic::AtomicPtr<AtomicBool> = std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

/// The exit code of a command ended by Ctrl-C or SIGTERM (128 + SIGINT, as shells report it).
pub const EXIT_CODE: u8 = 130;

/// The process's stop flag, which every run of the command line watches.
pub fn flag() -> Interrupt {
    Interrupt::from_flag(RAISED.clone())
}

/// Whether Ctrl-C or SIGTERM arrived.
pub fn raised() -> bool {
    RAISED.load(Ordering::Relaxed)
}

#[cfg(unix)]
extern "C" fn on_signal(sig: libc::c_int) {
    let p = FLAG.load(Ordering::Relaxed);
    if !p.is_null() {
        // SAFETY: the pointer is the flag's, which lives as long as the process.
        unsafe { &*p }.store(true, Ordering::Relaxed);
    }
    // SAFETY: `signal` is async-signal-safe; a second signal now takes the default action.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
    }
}

/// Installs the handler of SIGINT and SIGTERM (from `main`, before any run).
pub fn install() {
    FLAG.store(Arc::as_ptr(&RAISED).cast_mut(), Ordering::Relaxed);
    #[cfg(unix)]
    // SAFETY: the handler only stores to an atomic and calls `signal`, both async-signal-safe.
    unsafe {
        let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}
