//! The communication kernel of pto-isa's a2a3 GEMM + AllReduce example as a measured
//! workload: the kernel is `ranksim::programs::gemm_ar`, run timing-only here.

use ranksim::Config;
use ranksim::programs::gemm_ar::{self, COLS, TILE_ROWS};

/// Simulated time (us) of one call of the communication kernel on `ranks` ranks of `cfg`, for
/// an output of `bytes` (f16, [`COLS`] columns), as the measurement is taken (host-timed
/// launch and synchronize): the chip's kernel launch plus the slowest rank's device time.
pub(crate) fn comm_time_us(cfg: &Config, ranks: usize, bytes: u64) -> Result<f64, String> {
    let row_bytes = (COLS * 2) as u64;
    if bytes == 0 || !bytes.is_multiple_of(row_bytes * TILE_ROWS as u64) {
        let step = row_bytes * TILE_ROWS as u64;
        return Err(format!(
            "gemm_ar_comm needs a size that is a whole number of {TILE_ROWS} x {COLS} f16 tile rows ({step} bytes); {bytes} is not"
        ));
    }
    let mut w = cfg.world().map_err(|e| e.to_string())?;
    if ranks < 2 || ranks > w.size() {
        return Err(format!("gemm_ar_comm needs 2..={} ranks, not {ranks}", w.size()));
    }
    let launch_us = cfg.chip.dispatch_launch_ns / 1e3;
    let run = |w: &mut sim_core::World| -> sim_core::SimResult<f64> {
        w.set_timing_only()?;
        gemm_ar::queue(w, ranks, (bytes / row_bytes) as usize)?;
        let report = w.run()?;
        Ok(report.dispatches.iter().map(|d| d.device_wall().as_us_f64()).fold(0.0, f64::max))
    };
    Ok(launch_us + run(&mut w).map_err(|e| e.to_string())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_off_the_tile_grid_is_refused_with_the_step() {
        let cfg = Config::default_preset();
        let err = comm_time_us(&cfg, 8, 1000).unwrap_err();
        assert!(err.contains("393216 bytes") && err.contains("1000 is not"), "{err}");
    }
}
