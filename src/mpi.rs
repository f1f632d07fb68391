//! Split runs over MPI (the `mpi` feature): this process's MPI rank runs one partition of
//! each run, and the processes meet through MPI's collectives (`MPI_Alltoallv` of the events
//! that cross, `MPI_Allgatherv` of reports and results). Start it as `mpirun -np N ranksim
//! sweep ...`: [`join`] makes the MPI world the group the calling thread's split runs go over.

use mpi::Count;
use mpi::datatype::{Partition, PartitionMut};
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives};
use sim_core::ProcessGroup;

/// The MPI world as a [`ProcessGroup`].
struct MpiGroup {
    world: SimpleCommunicator,
}

/// This process's MPI session: MPI is finalized when it is dropped (at the end of `main`).
pub struct Session {
    _universe: Universe,
    /// This process's rank.
    pub rank: usize,
    /// How many processes.
    pub size: usize,
}

/// Whether this process was started by an MPI launcher (`mpirun` / `mpiexec` set its rank in
/// the environment), so a plain `ranksim` never initializes MPI.
pub fn launched() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"].iter().any(|v| std::env::var_os(v).is_some())
}

/// Initializes MPI and makes its world the group the calling thread's split runs
/// (`RunOptions::processes`) go over. `None` when MPI cannot be initialized.
pub fn join() -> Option<Session> {
    let universe = mpi::initialize()?;
    let world = universe.world();
    let (rank, size) = (usize::try_from(world.rank()).unwrap_or(0), usize::try_from(world.size()).unwrap_or(1));
    sim_core::join_processes(Box::new(MpiGroup { world }));
    Some(Session { _universe: universe, rank, size })
}

/// Counts and displacements of `parts` laid end to end, as MPI counts them.
fn layout(lens: impl Iterator<Item = usize>) -> Result<(Vec<Count>, Vec<Count>), String> {
    let (mut counts, mut displs, mut at) = (Vec::new(), Vec::new(), 0usize);
    for n in lens {
        let c = Count::try_from(n).map_err(|_| format!("a message of {n} bytes is larger than MPI counts (2^31)"))?;
        let d = Count::try_from(at)
            .map_err(|_| "a window's messages are larger than MPI counts (2^31 bytes)".to_string())?;
        counts.push(c);
        displs.push(d);
        at += n;
    }
    Ok((counts, displs))
}

/// `buf` cut at `counts`. The first part with bytes starts at 0 (the parts before it are
/// empty) and keeps `buf` itself; only the parts after it are copied out, so a process that
/// hears from one other (two processes, each sending nothing to itself) holds its window's
/// bytes once.
fn split(mut buf: Vec<u8>, counts: &[Count]) -> Vec<Vec<u8>> {
    let lens: Vec<usize> = counts.iter().map(|&c| usize::try_from(c).unwrap_or(0)).collect();
    let mut parts: Vec<Vec<u8>> = vec![Vec::new(); lens.len()];
    let Some(first) = lens.iter().position(|&n| n > 0) else { return parts };
    let mut at = lens[first];
    for (part, &n) in parts.iter_mut().zip(&lens).skip(first + 1) {
        *part = buf.get(at..at + n).unwrap_or_default().to_vec();
        at += n;
    }
    buf.truncate(lens[first]);
    parts[first] = buf;
    parts
}

impl ProcessGroup for MpiGroup {
    fn rank(&self) -> usize {
        usize::try_from(self.world.rank()).unwrap_or(0)
    }

    fn size(&self) -> usize {
        usize::try_from(self.world.size()).unwrap_or(1)
    }

    fn all_to_all(&mut self, out: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>, String> {
        let (send_counts, send_displs) = layout(out.iter().map(Vec::len))?;
        let mut recv_counts = vec![0 as Count; send_counts.len()];
        self.world.all_to_all_into(&send_counts[..], &mut recv_counts[..]);
        let (_, recv_displs) = layout(recv_counts.iter().map(|&c| usize::try_from(c).unwrap_or(0)))?;
        // One spare byte past each buffer: two empty vectors share an address, which MPI
        // takes for an in-place call and refuses.
        let mut flat: Vec<u8> = out.concat();
        drop(out);
        flat.push(0);
        let total: usize = recv_counts.iter().map(|&c| usize::try_from(c).unwrap_or(0)).sum();
        let mut recv = vec![0u8; total + 1];
        {
            let send = Partition::new(&flat[..], &send_counts[..], &send_displs[..]);
            let mut into = PartitionMut::new(&mut recv[..], &recv_counts[..], &recv_displs[..]);
            self.world.all_to_all_varcount_into(&send, &mut into);
        }
        drop(flat);
        Ok(split(recv, &recv_counts))
    }

    fn all_gather(&mut self, mine: Vec<u8>) -> Result<Vec<Vec<u8>>, String> {
        let n = self.size();
        let len =
            Count::try_from(mine.len()).map_err(|_| "a result larger than MPI counts (2^31 bytes)".to_string())?;
        let mut counts = vec![0 as Count; n];
        self.world.all_gather_into(&len, &mut counts[..]);
        let (_, displs) = layout(counts.iter().map(|&c| usize::try_from(c).unwrap_or(0)))?;
        let total: usize = counts.iter().map(|&c| usize::try_from(c).unwrap_or(0)).sum();
        let (mut send, mut recv) = (mine, vec![0u8; total + 1]);
        send.push(0);
        {
            let mut into = PartitionMut::new(&mut recv[..], &counts[..], &displs[..]);
            self.world.all_gather_varcount_into(&send[..send.len() - 1], &mut into);
        }
        drop(send);
        Ok(split(recv, &counts))
    }
}
