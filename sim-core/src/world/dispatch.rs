//! Queuing dispatches: what a dispatch is checked against (ranks, domains, cores, declared
//! tensors) and the task dependencies its declared tensors add ([`crate::api::dataflow`]).

use super::World;
use crate::api::dataflow;
use crate::api::program::{ArgDir, Dispatch};
use crate::base::error::{SimError, SimResult};
use crate::base::tensor::{Domain, Space};

impl World {
    /// Queues a dispatch on chip `chip`. Chips run their dispatches one at a time, in order.
    ///
    /// Each task starts after the tasks of [`crate::Task::after`] and after those its declared
    /// tensors imply (see [`ArgDir`](crate::ArgDir)). Refused: a declared window of a domain the chip is
    /// not a member of or that was released, and a declared read (`input`, `inout`) of a GM
    /// tensor nothing can have produced on this chip: no earlier task of the dispatch declares
    /// writing it, no earlier dispatch on the chip did (nor ran a task declaring nothing), and
    /// the host never staged it.
    pub fn dispatch(&mut self, chip: usize, mut d: Dispatch) -> SimResult<()> {
        if chip >= self.size {
            return Err(SimError::invalid(format!(
                "dispatch `{}` to rank {chip}, but the world has ranks 0..={}",
                d.name,
                self.size - 1
            )));
        }
        if let Some(dom) = &d.domain {
            self.check_live(&dom.0, || format!("dispatch `{}` to rank {chip}", d.name))?;
        }
        if let Some(dom) = &d.domain
            && dom.0.rank_of(chip).is_none()
        {
            return Err(SimError::invalid(format!(
                "dispatch `{}` to rank {chip}, which is not a member of its domain `{}` (members {:?})",
                d.name, dom.0.name, dom.0.members
            )));
        }
        if d.tasks.is_empty() {
            return Err(SimError::invalid(format!("dispatch `{}` has no tasks; add one with Dispatch::add", d.name)));
        }
        let cores = self.chip.aiv_cores();
        for (i, t) in d.tasks.iter().enumerate() {
            if t.kind == crate::api::program::CoreKind::Cube {
                self.cube_task_fits(&d, t)?;
            } else if t.blocks == 0 || t.blocks > cores {
                return Err(SimError::invalid(format!(
                    "task `{}` of dispatch `{}` asks for {} blocks; a chip has {cores} AIV cores, so use 1..={cores} (core_num <= AIV count)",
                    t.name, d.name, t.blocks
                )));
            }
            if let Some(bad) = t.deps.iter().find(|dep| dep.0 >= i) {
                return Err(SimError::invalid(format!(
                    "task `{}` depends on task #{}, which is not an earlier task of dispatch `{}`",
                    t.name, bad.0, d.name
                )));
            }
        }
        let written = self.check_args(chip, &d)?;
        let data = dataflow::derive(&d).map_err(SimError::invalid)?;
        for (t, deps) in d.tasks.iter_mut().zip(data) {
            t.deps.extend(deps);
            t.deps.sort_unstable();
            t.deps.dedup();
        }
        for buf in written {
            self.gm_written[buf][chip] = true;
        }
        self.opaque[chip] |= d.tasks.iter().any(|t| t.args.is_empty());
        self.queues[chip].push(d);
        Ok(())
    }

    /// Checks the tensors `d`'s tasks declare for `chip`; returns the GM buffers they may write.
    fn check_args(&self, chip: usize, d: &Dispatch) -> SimResult<Vec<usize>> {
        let mut written: Vec<usize> = Vec::new();
        let mut opaque = self.opaque[chip];
        for t in &d.tasks {
            for (dir, x) in &t.args {
                let who = || format!("task `{}` of dispatch `{}` on rank {chip} declares {x:?}", t.name, d.name);
                match &x.0.space {
                    Space::Window { domain } => {
                        self.check_live(domain, who)?;
                        if domain.rank_of(chip).is_none() {
                            return Err(SimError::invalid(format!(
                                "{}, a window of domain `{}` (members {:?}): rank {chip} is not a member, so its kernels cannot reach it",
                                who(),
                                domain.name,
                                domain.members
                            )));
                        }
                    }
                    Space::Gm { buf } => {
                        if dir.reads() && !opaque && !self.gm_written[*buf][chip] && !written.contains(buf) {
                            return Err(SimError::invalid(format!(
                                "{} as {}, but nothing produces it: no earlier task of the dispatch declares writing it (output, inout, output_existing), no earlier dispatch on rank {chip} did, and the host never staged it (World::write); declare its producer or stage the data",
                                who(),
                                dir.pypto_name()
                            )));
                        }
                    }
                }
            }
            for (dir, x) in &t.args {
                if let Space::Gm { buf } = &x.0.space
                    && *dir != ArgDir::Input
                {
                    written.push(*buf);
                }
            }
            opaque |= t.args.is_empty();
        }
        Ok(written)
    }

    /// Checks a cube task of `d` against the chip's AIC cores.
    fn cube_task_fits(&self, d: &Dispatch, t: &crate::api::program::Task) -> SimResult<()> {
        let Some(cube) = self.chip.cube() else {
            return Err(SimError::invalid(format!(
                "task `{}` of dispatch `{}` runs on cube cores (Task::on_cube), but the chip config has no \
                 [chip.cube] table (chip.cube), so the chip has no AIC cores; add [chip.cube] or make it an AIV task",
                t.name, d.name
            )));
        };
        let aic = cube.cores;
        if t.blocks == 0 || t.blocks > aic {
            return Err(SimError::invalid(format!(
                "task `{}` of dispatch `{}` asks for {} blocks on cube cores; a chip has {aic} AIC cores (chip.aic_cores), \
                 so use 1..={aic}",
                t.name, d.name, t.blocks
            )));
        }
        if t.lanes != 1 {
            return Err(SimError::invalid(format!(
                "task `{}` of dispatch `{}` asks for {} lanes on cube cores; an AIC block is one core (lanes are AIV \
                 sub-blocks): put the vector lanes in an AIV task after it",
                t.name, d.name, t.lanes
            )));
        }
        Ok(())
    }

    /// Queues `d` on every member of `domain`, with ranks answered for that domain.
    pub fn dispatch_all(&mut self, domain: &Domain, d: Dispatch) -> SimResult<()> {
        let d = d.in_domain(domain);
        for &chip in domain.members() {
            self.dispatch(chip, d.clone())?;
        }
        Ok(())
    }
}
