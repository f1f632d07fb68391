//! Why a measurement gave no result: the measuring module's one error type.

use crate::ConfigError;
use sim_core::SimError;

/// Why a measurement gave no result. A run that fails (a deadlock, a kernel error) is
/// [`Error::Sim`]; `sweep` turns it into a FAILED row and goes on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The machine's config does not build a world.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The fabric's topology does not build (for `busbw_bound`).
    #[error(transparent)]
    Topology(#[from] interconnect::FabricConfigError),
    /// `Measure::ranks` is 0 or more than the machine has.
    #[error("{ranks} ranks: the machine has {machine}; use 1..={machine}")]
    Ranks {
        /// The ranks asked for.
        ranks: usize,
        /// The machine's ranks.
        machine: usize,
    },
    /// The size gives no element per rank, and the collective needs some.
    #[error("{size_bytes} bytes give no element per rank; use a larger size")]
    NoElement {
        /// The size asked for, in bytes.
        size_bytes: u64,
    },
    /// A run the simulator warned about (a builtin that returned at once) was cut short, so
    /// the checker checked nothing.
    #[error("{name}: the run was cut short, so nothing was checked: {}", warnings.join("; "))]
    CutShort {
        /// The program or collective.
        name: String,
        /// The simulator's warnings.
        warnings: Vec<String>,
    },
    /// A checked program failed with an error that is not a finding (a kernel error).
    #[error("{name}: {source}")]
    Checked {
        /// The program or collective.
        name: String,
        /// The run's error.
        source: SimError,
    },
    /// A run failed: a deadlock, a kernel error, a refused call.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// Writing the table failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
