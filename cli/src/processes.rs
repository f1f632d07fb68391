//! Sweeps split over MPI processes (`mpirun -np N ranksim sweep ...`, the `mpi` feature): the
//! session every process joins at start, and what a sweep's arguments become under it. The
//! built-in `ranksim` and a user's collective (`main_for`) share both.

use crate::commands::sweep::SweepArgs;

/// This process's place among the processes a sweep is split over: `(rank, size)`, `None`
/// when it runs alone.
pub type Place = Option<(usize, usize)>;

/// The MPI session of a process started by `mpirun` (the `mpi` feature): MPI is finalized
/// when it is dropped, at the end of `main`. `sweep` says whether the command is a sweep,
/// the one command split over processes; another under several processes is refused (each
/// would run it whole).
#[cfg(feature = "mpi")]
pub fn join(sweep: bool) -> Result<(Place, Option<ranksim::mpi::Session>), String> {
    if !ranksim::mpi::launched() {
        return Ok((None, None));
    }
    let session = ranksim::mpi::join().ok_or("MPI could not be initialized")?;
    if session.size < 2 {
        return Ok((None, Some(session)));
    }
    if !sweep {
        return Err(format!(
            "under mpirun only `sweep` is split over the processes ({} here); run other commands without mpirun",
            session.size
        ));
    }
    Ok((Some((session.rank, session.size)), Some(session)))
}

/// Without the `mpi` feature every process runs alone.
#[cfg(not(feature = "mpi"))]
pub fn join(_sweep: bool) -> Result<(Place, Option<()>), String> {
    Ok((None, None))
}

/// A sweep's arguments for a run over `place = (rank, size)` processes: one partition each,
/// sizes one after another (every process takes part in every run), and the JSON, STRACE and
/// plot written by the first process only. Nothing that changes a run may differ between the
/// processes (they would wait for each other forever): `--trace`, which asks for a traced run,
/// stays on every process (a split run refuses it on each).
pub fn sweep_args(mut a: SweepArgs, place: Place) -> Result<SweepArgs, String> {
    let Some((rank, size)) = place else { return Ok(a) };
    if a.partitions != 1 && a.partitions != size {
        return Err(format!(
            "--partitions {}: under mpirun a run has one partition per process ({size}); leave it out",
            a.partitions
        ));
    }
    a.partitions = size;
    a.processes = true;
    a.jobs = Some(1);
    if rank > 0 {
        (a.json, a.plot, a.strace) = (None, None, None);
    }
    Ok(a)
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
        a.json = Some("r.json".into());
        let first = sweep_args(a.clone(), Some((0, 3))).unwrap();
        assert_eq!((first.partitions, first.processes, first.jobs), (3, true, Some(1)));
        assert!(first.json.is_some());
        assert!(sweep_args(a.clone(), Some((2, 3))).unwrap().json.is_none());
        assert_eq!(sweep_args(a.clone(), None).unwrap().partitions, 1, "alone: unchanged");
        a.partitions = 2;
        assert!(sweep_args(a, Some((0, 3))).unwrap_err().contains("one partition per process (3)"));
    }
}
