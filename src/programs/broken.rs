//! The zoo of broken protocols: one small program per kind of bug the checker finds
//! (reference §6), each with the mistake a comment points at. `ranksim check` runs them by
//! their `broken-*` names; the tests hold each to its finding.

use sim_core::{
    AtomicType, CopyOpts, Core, DType, Dispatch, NotifyOp, RunReport, SimResult, Task, Tensor, WaitCmp, World,
};

use super::common::{barrier, domain};

/// Elements per rank in the data windows.
const N: usize = 1024;

/// A zoo entry.
pub struct Broken {
    /// `broken-...`.
    pub name: &'static str,
    /// The mistake, in one line.
    pub about: &'static str,
    /// Fewest ranks it needs.
    pub min_ranks: usize,
    /// Sets it up on the first `ranks` chips and runs it.
    pub run: fn(&mut World, usize) -> SimResult<RunReport>,
}

/// Every broken protocol.
pub const BROKEN: &[Broken] = &[
    Broken {
        name: "broken-missing-barrier",
        about: "stage into the window, then remote_load the next rank's without a barrier (data race)",
        min_ranks: 2,
        run: missing_barrier,
    },
    Broken {
        name: "broken-put-without-notify",
        about: "put to the next rank and let it read its window without waiting for a notify (data race)",
        min_ranks: 2,
        run: put_without_notify,
    },
    Broken {
        name: "broken-no-fence",
        about: "on a relaxed fabric, remote_store then notify without a fence (the notify overtakes its payload)",
        min_ranks: 2,
        run: no_fence,
    },
    Broken {
        name: "broken-concurrent-set",
        about: "every peer notifies Set 1 into the same cell of rank 0",
        min_ranks: 3,
        run: concurrent_set,
    },
    Broken {
        name: "broken-set-mixed-with-add",
        about: "rank 0 resets its cell with Set 0 while rank 1 AtomicAdds into it",
        min_ranks: 2,
        run: set_mixed_with_add,
    },
    Broken {
        name: "broken-eq-overshoot",
        about: "rank 1 adds 2 twice; rank 0 waits for the counter == 3",
        min_ranks: 2,
        run: eq_overshoot,
    },
    Broken {
        name: "broken-tag-zero",
        about: "rank 1 notifies AtomicAdd 0 (tag 0); rank 0 waits >= 1",
        min_ranks: 2,
        run: tag_zero,
    },
    Broken {
        name: "broken-credits-left",
        about: "a self-clearing barrier that never takes its credits back out",
        min_ranks: 2,
        run: credits_left,
    },
    Broken {
        name: "broken-signal-reuse",
        about: "the same barrier twice, waiting for generation 1 both times, no reset in between",
        min_ranks: 2,
        run: signal_reuse,
    },
    Broken {
        name: "broken-duplicate-notify",
        about: "a two-lane kernel notifies outside a lane guard, so the peer is notified twice",
        min_ranks: 2,
        run: duplicate_notify,
    },
    Broken { name: "broken-deadlock", about: "every rank waits before it notifies", min_ranks: 2, run: deadlock },
    Broken {
        name: "broken-cores-exhausted",
        about: "a task's blocks wait on every AIV core, so the producer task can never be placed",
        min_ranks: 1,
        run: cores_exhausted,
    },
];

// The zoo's lookup (`programs::find_broken`) and its whole list (`programs::broken_zoo`) live
// in programs/mod.rs, above this file and broken_polls.rs (which builds on this one). The
// programs below keep their lines: the checker's goldens record their findings' locations
// as `src/programs/broken.rs:LINE`.

/// A `[1, N]` f32 window and an `[ranks, 1]` signal on the first `ranks` chips.
pub(super) fn setup(w: &mut World, ranks: usize) -> SimResult<(sim_core::Domain, Tensor, Tensor)> {
    let dom = domain(w, ranks)?;
    let data = w.alloc_window(&dom, "data", DType::F32, &[1, N])?;
    let sig = w.alloc_window(&dom, "signal", DType::I32, &[ranks, 1])?;
    Ok((dom, data, sig))
}

pub(super) fn next(core: &Core) -> usize {
    (core.rank() + 1) % core.nranks()
}

fn missing_barrier(w: &mut World, ranks: usize) -> SimResult<RunReport> {
    let (dom, data, _) = setup(w, ranks)?;
    w.dispatch_all(
        &dom,
        Dispatch::kernel("missing_barrier", 1, move |core| {
            let t = sim_core::Tile::from_slice(1, N, &vec![core.rank() as f32; N])?;
            core.store(&t, &data, &[0, 0])?;
            // Mistake: no barrier here, so the peer's store may not have happened yet.
            core.remote_load(&data, next(core), &[0, 0], &[1, N])?;
            Ok(())
        }),
    )?;
    w.run()
}

fn put_without_notify(w: &mut World, ranks: usize) -> SimResult<RunReport> {
    let (dom, data, _) = setup(w, ranks)?;
    let src = w.alloc_tensor("src", DType::F32, &[1, N])?;
    w.dispatch_all(
        &dom,
        Dispatch::kernel("put_without_notify", 1, move |core| {
            core.put(&data, next(core), &src, &CopyOpts::new())?;
            // Mistake: read our own window without waiting for the sender's notify.
            core.compute(2_000);
            core.load(&data, &[0, 0], &[1, N])?;
            Ok(())
        }),
    )?;
    w.run()
}

fn no_fence(w: &mut World, ranks: usize) -> SimResult<RunReport> {
    no_fence_with(w, ranks, false)
}

/// `broken-no-fence`, or its fixed version with `fence` before the notify. The 128 KiB
/// payload is still streaming over the link when the notify is sent.
pub fn no_fence_with(w: &mut World, ranks: usize, fence: bool) -> SimResult<RunReport> {
    const BIG: usize = 32 * 1024;
    w.options_mut().relaxed_ordering = true;
    let dom = domain(w, ranks)?;
    let data = w.alloc_window(&dom, "data", DType::F32, &[1, BIG])?;
    let sig = w.alloc_window(&dom, "signal", DType::I32, &[ranks, 1])?;
    w.dispatch_all(
        &dom,
        Dispatch::kernel("no_fence", 1, move |core| {
            let (me, n) = (core.rank(), core.nranks());
            let t = sim_core::Tile::from_slice(1, BIG, &vec![me as f32 + 1.0; BIG])?;
            core.remote_store(&t, &data, (me + 1) % n, &[0, 0], AtomicType::None)?;
            if fence {
                core.fence()?;
            }
            core.notify(&sig, (me + 1) % n, &[me, 0], 1, NotifyOp::AtomicAdd)?;
            core.wait(&sig, &[(me + n - 1) % n, 0], 1, WaitCmp::Ge)?;
            core.load(&data, &[0, 0], &[1, BIG])?;
            Ok(())
        }),
    )?;
    w.run()
}

fn concurrent_set(w: &mut World, ranks: usize) -> SimResult<RunReport> {
    let (dom, _, sig) = setup(w, ranks)?;
    w.dispatch_all(
        &dom,
        Dispatch::kernel("concurrent_set", 1, move |core| {
            if core.rank() == 0 {
                return core.wait(&sig, &[0, 0], 1, WaitCmp::Ge);
            }
            // Mistake: every peer Sets the same cell; one "arrived" flag hides the others.
            core.notify(&sig, 0, &[0, 0], 1, NotifyOp::Set)
        }),
    )?;
    w.run()
}

fn set_mixed_with_add(w: &mut World, ranks: usize) -> SimResult<RunReport> {
    let (dom, _, sig) = setup(w, ranks)?;
    w.dispatch_all(
        &dom,
        Dispatch::kernel("set_mixed_with_add", 1, move |core| match core.rank() {
            0 => {
                // Mistake: a reset that nothing orders against the peer's add.
                core.notify(&sig, 0, &[1, 0], 0, NotifyOp::Set)?;
                core.compute(100_000);
                Ok(())
            }
            1 => core.notify(&sig, 0, &[1, 0], 1, NotifyOp::AtomicAdd),
            _ => Ok(()),
        }),
    )?;
    w.run()
}

fn eq_overshoot(w: &mut World, ranks: usize) -> SimResult<RunReport> {
    let (dom, _, sig) = setup(w, ranks)?;
    w.dispatch_all(
        &dom,
        Dispatch::kernel("eq_overshoot", 1, move |core| match core.rank() {
            // Mistake: Eq on a counter that moves in steps of 2.
            0 => core.wait(&sig, &[1, 0], 3, WaitCmp::Eq),
            1 => {
                core.notify(&sig, 0, &[1, 0], 2, NotifyOp::AtomicAdd)?;
                core.notify(&sig, 0, &[1, 0], 2, NotifyOp::AtomicAdd)
            }
            _ => Ok(()),
        }),
    )?;
    w.run()
}

fn tag_zero(w: &mut World, ranks: usize) -> SimResult<RunReport> {
    let (dom, _, sig) = setup(w, ranks)?;
    w.dispatch_all(
        &dom,
        Dispatch::kernel("tag_zero", 1, move |core| match core.rank() {
            0 => core.wait(&sig, &[1, 0], 1, WaitCmp::Ge),
            // Mistake: the tag is 0, so the notify adds nothing.
            1 => core.notify(&sig, 0, &[1, 0], 0, NotifyOp::AtomicAdd),
            _ => Ok(()),
        }),
    )?;
    w.run()
}

fn credits_left(w: &mut World, ranks: usize) -> SimResult<RunReport> {
    let (dom, _, sig) = setup(w, ranks)?;
    w.dispatch_all(
        &dom,
        Dispatch::kernel("credits_left", 1, move |core| {
            barrier(core, &sig, 1)?;
            let me = core.rank();
            for p in (0..core.nranks()).filter(|&p| p != me) {
                core.expect_clear(&sig, &[p, 0], &[1, 1])?;
            }
            // Mistake: no epilogue taking the credits back out (AtomicAdd -1 per peer cell).
            Ok(())
        }),
    )?;
    w.run()
}

fn signal_reuse(w: &mut World, ranks: usize) -> SimResult<RunReport> {
    let (dom, _, sig) = setup(w, ranks)?;
    for call in ["barrier_1", "barrier_2"] {
        let s = sig.clone();
        // Mistake: the second call waits for generation 1 again; the first call's credits
        // already satisfy it.
        w.dispatch_all(&dom, Dispatch::kernel(call, 1, move |core| barrier(core, &s, 1)))?;
    }
    w.run()
}

fn duplicate_notify(w: &mut World, ranks: usize) -> SimResult<RunReport> {
    let (dom, _, sig) = setup(w, ranks)?;
    let mut d = Dispatch::new("duplicate_notify");
    d.add(
        Task::new("mixed", 1, move |core| {
            let (me, n) = (core.rank(), core.nranks());
            // Mistake: no `if core.sub_block_idx() == 0` guard, so both lanes notify.
            core.notify(&sig, (me + 1) % n, &[me, 0], 1, NotifyOp::AtomicAdd)?;
            core.wait(&sig, &[(me + n - 1) % n, 0], 1, WaitCmp::Ge)
        })
        .lanes(2),
    );
    w.dispatch_all(&dom, d)?;
    w.run()
}

fn deadlock(w: &mut World, ranks: usize) -> SimResult<RunReport> {
    // The tutorial's broken program: every rank waits before it notifies.
    super::deadlock::run(w, ranks).map(|o| o.report)
}

fn cores_exhausted(w: &mut World, ranks: usize) -> SimResult<RunReport> {
    let (dom, _, sig) = setup(w, ranks)?;
    let cores = w.chip().aiv_cores();
    let mut d = Dispatch::new("cores_exhausted");
    let s = sig.clone();
    // Mistake: blocking waits on every core; the producer needs one more.
    d.add(Task::new("waiters", cores, move |core| core.wait(&s, &[0, 0], 1, WaitCmp::Ge)));
    d.add(Task::new("producer", 1, move |core| core.notify(&sig, core.rank(), &[0, 0], 1, NotifyOp::AtomicAdd)));
    w.dispatch_all(&dom, d)?;
    w.run()
}
