//! Shared pieces of the built-in programs: inputs, goldens, a hand-rolled barrier, and the
//! outcome type.

use sim_core::{
    Core, DType, Dispatch, Domain, DomainOptions, NotifyOp, RunReport, SimResult, Tensor, Tile, WaitCmp, World,
};

/// What a program run produced.
#[derive(Debug)]
pub struct Outcome {
    /// The result matched the golden.
    pub ok: bool,
    /// What was compared, or the first mismatch.
    pub detail: String,
    /// Timing of the run.
    pub report: RunReport,
}

/// The comm domain of the first `ranks` chips.
pub(crate) fn domain(world: &mut World, ranks: usize) -> SimResult<Domain> {
    let members: Vec<usize> = (0..ranks).collect();
    world.create_domain("comm_d0", &members, DomainOptions::default())
}

/// PyPTO's common input recipe: rank r holds `r*100 .. r*100 + size` as f32.
pub(crate) fn arange_input(rank: usize, size: usize) -> Vec<f32> {
    (0..size).map(|i| (rank * 100 + i) as f32).collect()
}

/// A rank-local program of one vector operation: every rank loads its `x` (`size` elements of
/// [`arange_input`]), computes `op(core, x)` in kernel `kernel` and stores it to `y`; checked
/// against `golden(x[i], rank)` element by element, as `what`.
pub(crate) fn rank_local_map(
    world: &mut World,
    ranks: usize,
    size: usize,
    (kernel, what): (&str, &str),
    op: fn(&mut Core, &Tile) -> SimResult<Tile>,
    golden: fn(f32, usize) -> f32,
) -> SimResult<Outcome> {
    let dom = domain(world, ranks)?;
    let x = world.alloc_tensor("x", DType::F32, &[1, size])?;
    let y = world.alloc_tensor("y", DType::F32, &[1, size])?;
    for r in 0..ranks {
        world.write(&x, r, &arange_input(r, size))?;
    }
    let (xk, yk) = (x.clone(), y.clone());
    world.dispatch_all(
        &dom,
        Dispatch::kernel(kernel, 1, move |core| {
            let t = core.load(&xk, &[0, 0], &[1, size])?;
            let out = op(core, &t)?;
            core.store(&out, &yk, &[0, 0])
        }),
    )?;
    let report = world.run()?;
    let got: Vec<Vec<f32>> = (0..ranks).map(|r| world.read(&y, r)).collect::<SimResult<_>>()?;
    let want: Vec<Vec<f32>> =
        (0..ranks).map(|r| arange_input(r, size).iter().map(|&v| golden(v, r)).collect()).collect();
    Ok(compare(report, what, &got, &want))
}

/// Compares per-rank results with their goldens exactly: the same number of ranks, of
/// elements per rank, and every element.
pub(crate) fn compare(report: RunReport, what: &str, got: &[Vec<f32>], want: &[Vec<f32>]) -> Outcome {
    if got.len() != want.len() {
        let detail = format!("{what}: {} ranks of results but {} goldens", got.len(), want.len());
        return Outcome { ok: false, detail, report };
    }
    for (r, (g, w)) in got.iter().zip(want).enumerate() {
        if g.len() != w.len() {
            let detail = format!("{what}: rank {r} has {} elements but the golden has {}", g.len(), w.len());
            return Outcome { ok: false, detail, report };
        }
        if let Some(i) = g.iter().zip(w).position(|(a, b)| a != b) {
            return Outcome {
                ok: false,
                detail: format!("{what}: rank {r} element {i} is {} but the golden is {}", g[i], w[i]),
                report,
            };
        }
    }
    Outcome { ok: true, detail: format!("{what}: {} ranks match the golden", got.len()), report }
}

/// A one-shot hand-rolled barrier on `[NR, 1]` signal cells: +1 to every peer's cell `[me, 0]`,
/// then wait for every local cell `[src, 0] >= generation`.
pub(crate) fn barrier(core: &mut Core, signal: &Tensor, generation: i32) -> SimResult<()> {
    let (me, n) = (core.rank(), core.nranks());
    for peer in (0..n).filter(|&p| p != me) {
        core.notify(signal, peer, &[me, 0], 1, NotifyOp::AtomicAdd)?;
    }
    for src in (0..n).filter(|&p| p != me) {
        core.wait(signal, &[src, 0], generation, WaitCmp::Ge)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty_report() -> RunReport {
        let mut w = crate::Config::default_preset().world().expect("the a2a3 world");
        w.run().expect("an empty run")
    }

    #[test]
    fn compare_needs_every_rank_and_every_element() {
        let want = vec![vec![1.0, 2.0], vec![3.0, 4.0]];
        assert!(compare(empty_report(), "x", &want, &want).ok);
        let short = vec![vec![1.0], vec![3.0, 4.0]];
        let o = compare(empty_report(), "x", &short, &want);
        assert!(!o.ok && o.detail.contains("rank 0 has 1 elements but the golden has 2"), "{}", o.detail);
        let fewer = vec![vec![1.0, 2.0]];
        let o = compare(empty_report(), "x", &fewer, &want);
        assert!(!o.ok && o.detail.contains("1 ranks of results but 2 goldens"), "{}", o.detail);
        let wrong = vec![vec![1.0, 2.0], vec![3.0, 5.0]];
        let o = compare(empty_report(), "x", &wrong, &want);
        assert!(!o.ok && o.detail.contains("rank 1 element 1 is 5"), "{}", o.detail);
    }
}
