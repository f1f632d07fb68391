//! Runs split over MPI processes (`mpirun -np N ranksim sweep ...`, or `ranksim check`; the
//! `mpi` feature): the session every process joins at start, and what a command's arguments
//! become under it. The built-in `ranksim` and a user's collective (`main_for`, whose sweep
//! and check split) share both.

use crate::commands::check::CheckArgs;
use crate::commands::sweep::SweepArgs;
use ranksim::measure::memory::MemoryLimit;

/// This process's place among the processes a sweep is split over: `(rank, size)`, `None`
/// when it runs alone.
pub type Place = Option<(usize, usize)>;

/// The MPI session of a process started by `mpirun` (the `mpi` feature): MPI is finalized
/// when it is dropped, at the end of `main`. `split` says whether the command is one that
/// splits over processes (a sweep, `ranksim check`); another under several processes is
/// refused (each would run it whole).
#[cfg(feature = "mpi")]
pub fn join(split: bool) -> Result<(Place, Option<ranksim::mpi::Session>), String> {
    if !ranksim::mpi::launched() {
        return Ok((None, None));
    }
    let session = ranksim::mpi::join().ok_or("MPI could not be initialized")?;
    if session.size < 2 {
        return Ok((None, Some(session)));
    }
    if !split {
        return Err(format!(
            "under mpirun only `sweep` and `ranksim check` are split over the processes ({} here); run other commands \
             without mpirun",
            session.size
        ));
    }
    Ok((Some((session.rank, session.size)), Some(session)))
}

/// Without the `mpi` feature every process runs alone.
#[cfg(not(feature = "mpi"))]
pub fn join(_split: bool) -> Result<(Place, Option<()>), String> {
    Ok((None, None))
}

/// A sweep's arguments for a run over `place = (rank, size)` processes: one partition each,
/// sizes one after another (every process takes part in every run), and the JSON, STRACE and
/// plot written by the first process only. Nothing that changes a run may differ between the
/// processes (they would wait for each other forever): `--trace`, which asks for a traced run,
/// stays on every process, and only the first writes the file.
pub fn sweep_args(mut a: SweepArgs, place: Place) -> Result<SweepArgs, String> {
    let Some((rank, size)) = place else { return Ok(a) };
    a.partitions = one_each(a.partitions, size)?;
    a.processes = true;
    a.jobs = Some(1);
    a.budgets.max_memory = same_everywhere(a.budgets.max_memory);
    if rank > 0 {
        (a.json, a.plot, a.strace, a.no_trace_file) = (None, None, None, true);
    }
    Ok(a)
}

/// `check`'s arguments for a run over `place = (rank, size)` processes: one partition each,
/// the findings' JSON and the trace written by the first process only (every process traces
/// alike).
pub fn check_args(mut a: CheckArgs, place: Place) -> Result<CheckArgs, String> {
    let Some((rank, size)) = place else { return Ok(a) };
    a.partitions = one_each(a.partitions, size)?;
    a.processes = true;
    a.budgets.max_memory = same_everywhere(a.budgets.max_memory);
    if rank > 0 {
        (a.json, a.no_trace_file) = (None, true);
    }
    Ok(a)
}

/// The memory limit of a run over processes: `--max-memory`, the same on every process; not
/// what each host has available, which differs between processes, and a size one refused and
/// another ran would leave the other waiting for it.
pub(crate) fn same_everywhere(limit: Option<MemoryLimit>) -> Option<MemoryLimit> {
    limit.filter(|l| matches!(l, MemoryLimit::Given(_)))
}

/// The partitions of a run over `size` processes: one each (`--partitions` left out, or
/// saying so).
pub(crate) fn one_each(partitions: usize, size: usize) -> Result<usize, String> {
    if partitions > 1 && partitions != size {
        return Err(format!(
            "--partitions {partitions}: under mpirun a run has one partition per process ({size}); leave it out"
        ));
    }
    Ok(size)
}

/// Where a process's output goes: stdout for the first process (or one alone), nowhere for the
/// others, which compute the same.
pub fn output<'a>(
    place: Place,
    stdout: &'a mut dyn std::io::Write,
    sink: &'a mut std::io::Sink,
) -> &'a mut dyn std::io::Write {
    match place {
        Some((rank, _)) if rank > 0 => sink,
        _ => stdout,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_over_processes_has_one_partition_each_and_only_the_first_writes_files() {
        let mut a = SweepArgs::new(None);
        (a.json, a.trace) = (Some("r.json".into()), Some("t.json".into()));
        let first = sweep_args(a.clone(), Some((0, 3))).unwrap();
        assert_eq!((first.partitions, first.processes, first.jobs), (3, true, Some(1)));
        assert!(first.json.is_some() && !first.no_trace_file);
        let third = sweep_args(a.clone(), Some((2, 3))).unwrap();
        assert!(third.json.is_none());
        assert!(third.trace.is_some() && third.no_trace_file, "every process traces, the first writes the file");
        assert_eq!(sweep_args(a.clone(), None).unwrap().partitions, 1, "alone: unchanged");
        a.partitions = 2;
        assert!(sweep_args(a, Some((0, 3))).unwrap_err().contains("one partition per process (3)"));
    }

    #[test]
    fn a_check_over_processes_has_one_partition_each_and_only_the_first_writes_files() {
        let a = CheckArgs { json: Some("f.json".into()), trace: Some("t.json".into()), ..Default::default() };
        let first = check_args(a.clone(), Some((0, 2))).unwrap();
        assert_eq!((first.partitions, first.processes), (2, true));
        assert!(first.json.is_some() && !first.no_trace_file);
        let second = check_args(a.clone(), Some((1, 2))).unwrap();
        assert!(second.json.is_none() && second.trace.is_some() && second.no_trace_file);
        assert_eq!(check_args(a.clone(), None).unwrap().partitions, 0, "alone: unchanged");
        let four = CheckArgs { partitions: 4, ..a };
        assert!(check_args(four, Some((0, 2))).unwrap_err().contains("one partition per process (2)"));
    }

    /// Processes decide alike: a given --max-memory holds on every one, the memory each host
    /// happens to have available is not a limit (alone, it is).
    #[test]
    fn processes_share_a_given_memory_limit_and_not_what_each_host_has() {
        let mut a = SweepArgs::new(None);
        a.budgets.max_memory = Some(MemoryLimit::Available(8 << 30));
        assert_eq!(sweep_args(a.clone(), Some((1, 2))).unwrap().budgets.max_memory, None);
        assert_eq!(sweep_args(a.clone(), None).unwrap().budgets.max_memory, Some(MemoryLimit::Available(8 << 30)));
        a.budgets.max_memory = Some(MemoryLimit::Given(4 << 30));
        assert_eq!(sweep_args(a, Some((0, 2))).unwrap().budgets.max_memory, Some(MemoryLimit::Given(4 << 30)));
        let mut c = CheckArgs::default();
        c.budgets.max_memory = Some(MemoryLimit::Available(8 << 30));
        assert_eq!(check_args(c, Some((0, 2))).unwrap().budgets.max_memory, None);
    }
}
