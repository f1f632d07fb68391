//! The zoo's broken polling protocols: kernels that spin on `test_signal` or `read_scalar`
//! for what nothing in flight will ever change, each ended as a livelock. `ranksim check`
//! runs them by their `broken-*` names next to [`super::broken`]'s.

use sim_core::{AtomicType, Core, Dispatch, NotifyOp, RunReport, SimResult, Tensor, WaitCmp, World};

use super::broken::{Broken, next, setup};

/// Every broken polling protocol.
pub const BROKEN_POLLS: &[Broken] = &[
    Broken {
        name: "broken-poll-wrong-cell",
        about: "each rank polls (test_signal) its own row of the signal, where the previous rank notifies its row",
        min_ranks: 2,
        run: poll_wrong_cell,
    },
    Broken {
        name: "broken-poll-reset-too-early",
        about: "two blocks poll one flag; the first to see it resets it before the other has polled it",
        min_ranks: 2,
        run: poll_reset_too_early,
    },
    Broken {
        name: "broken-poll-credit-not-returned",
        about: "a sender polls for credits that the receiver never returns (2 credits, 3 messages)",
        min_ranks: 2,
        run: poll_credit_not_returned,
    },
    Broken {
        name: "broken-poll-eq-overshoot",
        about: "a poll for a counter == 3 that every peer adds 2 to",
        min_ranks: 2,
        run: poll_eq_overshoot,
    },
    Broken {
        name: "broken-read-scalar-wrong-rank",
        about: "a read_scalar loop on a flag its producer sets on its own rank instead of the reader's",
        min_ranks: 2,
        run: read_scalar_wrong_rank,
    },
];

/// Spins while `signal[offsets]` does not satisfy `cmp expected` (a TTEST loop). Reports
/// name the line calling it: `test_signal` records its caller through `#[track_caller]`.
#[track_caller]
fn spin(core: &mut Core, signal: &Tensor, offsets: &[usize], expected: i32, cmp: WaitCmp) -> SimResult<()> {
    while !core.test_signal(signal, offsets, expected, cmp)? {}
    Ok(())
}

fn poll_wrong_cell(w: &mut World, ranks: usize) -> SimResult<RunReport> {
    let (dom, _, sig) = setup(w, ranks)?;
    w.dispatch_all(
        &dom,
        Dispatch::kernel("poll_wrong_cell", 1, move |core| {
            let me = core.rank();
            core.notify(&sig, next(core), &[me, 0], 1, NotifyOp::AtomicAdd)?;
            // Mistake: the previous rank notified row `me - 1`, not row `me`.
            spin(core, &sig, &[me, 0], 1, WaitCmp::Ge)
        }),
    )?;
    w.run()
}

fn poll_reset_too_early(w: &mut World, ranks: usize) -> SimResult<RunReport> {
    let (dom, _, sig) = setup(w, ranks)?;
    w.dispatch_all(
        &dom,
        Dispatch::kernel("poll_reset_too_early", 2, move |core| {
            let me = core.rank();
            match (me, core.block_idx()) {
                (0, 0) => core.notify(&sig, 1, &[0, 0], 1, NotifyOp::Set),
                (1, b) => {
                    // Block 1 polls more slowly (it does some work first).
                    if b == 1 {
                        core.compute(5_000);
                    }
                    spin(core, &sig, &[0, 0], 1, WaitCmp::Ge)?;
                    // Mistake: the flag is reset as soon as one block has seen it.
                    core.notify(&sig, me, &[0, 0], 0, NotifyOp::Set)
                }
                _ => Ok(()),
            }
        }),
    )?;
    w.run()
}

fn poll_credit_not_returned(w: &mut World, ranks: usize) -> SimResult<RunReport> {
    let (dom, data, sig) = setup(w, ranks)?;
    // Rank 0 starts with 2 credits for rank 1 (row 0 of its own signal).
    let mut credits = vec![0i32; ranks];
    credits[0] = 2;
    w.write(&sig, 0, &credits)?;
    w.dispatch_all(
        &dom,
        Dispatch::kernel("poll_credit_not_returned", 1, move |core| match core.rank() {
            0 => {
                let t = sim_core::Tile::from_slice(1, 8, &[1.0f32; 8])?;
                for k in 0..3 {
                    // Take a credit, then send one message.
                    spin(core, &sig, &[0, 0], 1, WaitCmp::Ge)?;
                    core.notify(&sig, 0, &[0, 0], -1, NotifyOp::AtomicAdd)?;
                    core.remote_store(&t, &data, 1, &[0, 8 * k], AtomicType::None)?;
                    core.notify(&sig, 1, &[1, 0], 1, NotifyOp::AtomicAdd)?;
                }
                Ok(())
            }
            1 => {
                core.wait(&sig, &[1, 0], 3, WaitCmp::Ge)?;
                // Mistake: the receiver never gives the credits back (notify rank 0's row 0).
                core.load(&data, &[0, 0], &[1, 24]).map(|_| ())
            }
            _ => Ok(()),
        }),
    )?;
    w.run()
}

fn poll_eq_overshoot(w: &mut World, ranks: usize) -> SimResult<RunReport> {
    let (dom, _, sig) = setup(w, ranks)?;
    w.dispatch_all(
        &dom,
        Dispatch::kernel("poll_eq_overshoot", 1, move |core| match core.rank() {
            // Mistake: Eq on a counter that moves in steps of 2.
            0 => spin(core, &sig, &[1, 0], 3, WaitCmp::Eq),
            1 => {
                core.notify(&sig, 0, &[1, 0], 2, NotifyOp::AtomicAdd)?;
                core.notify(&sig, 0, &[1, 0], 2, NotifyOp::AtomicAdd)
            }
            _ => Ok(()),
        }),
    )?;
    w.run()
}

fn read_scalar_wrong_rank(w: &mut World, ranks: usize) -> SimResult<RunReport> {
    let (dom, _, sig) = setup(w, ranks)?;
    w.dispatch_all(
        &dom,
        Dispatch::kernel("read_scalar_wrong_rank", 1, move |core| match core.rank() {
            // Mistake: the producer sets the flag in its own window, not rank 1's.
            0 => core.notify(&sig, 0, &[0, 0], 1, NotifyOp::Set),
            1 => {
                while core.read_scalar(&sig, &[0, 0])? == 0.0 {}
                Ok(())
            }
            _ => Ok(()),
        }),
    )?;
    w.run()
}
