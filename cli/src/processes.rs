//! Runs split over MPI processes (`mpirun -np N ranksim sweep ...`, or `ranksim check`; the
//! `mpi` feature): the session every process joins at start, and what a command's arguments
//! become under it. The built-in `ranksim` and a user's collective (`main_for`, whose sweep
//! and check split) share both.

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
