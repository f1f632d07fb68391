//! The data-path resources of one chip: which engines move bytes between a core and GM, how
//! many of each, at what rate. The fabric (interconnect) books packets on them; the chip model
//! says what they are.

use crate::model::ChipModel;
use sim_core::{
    Bandwidth,
    model::{ChipTiming, DmaDir},
};

/// The chip-side data paths of one chip, as [`ChipModel::paths`] derives them. Rates are
/// effective (no fabric efficiency applied); `None` = unlimited.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ChipPaths {
    /// Cores per chip, each with its own MTE2 (GM -> UB) and MTE3 (UB -> GM) engine.
    pub cores: usize,
    /// Rate of each core's MTE2 engine.
    pub mte2: Option<Bandwidth>,
    /// Rate of each core's MTE3 engine.
    pub mte3: Option<Bandwidth>,
    /// Rate of each chip's HBM (shared by all its cores and all incoming traffic).
    pub hbm: Option<Bandwidth>,
    /// SDMA channels per chip (0: none).
    pub sdma_channels: usize,
    /// Rate of each SDMA channel.
    pub sdma: Option<Bandwidth>,
    /// AIC (cube) cores per chip (0: none), numbered after the AIV cores, each with its own
    /// GM -> L1 engine (MTE2, rate `gm_to_l1`) and L0C -> GM engine (FIXPIPE, rate `l0c_to_gm`).
    pub cube_cores: usize,
    /// Rate of each AIC core's GM -> L1 engine.
    pub gm_to_l1: Option<Bandwidth>,
    /// Rate of each AIC core's L0C -> GM engine.
    pub l0c_to_gm: Option<Bandwidth>,
}

/// The kinds of engine a chip has, in [`EngineKind::ORDER`], the one order a chip's engine
/// resources are numbered in (the fabric model indexes them through
/// [`ChipPaths::engine_offset`], never by a formula of its own).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum EngineKind {
    /// An AIV core's MTE2 (GM -> UB).
    Mte2,
    /// An AIV core's MTE3 (UB -> GM).
    Mte3,
    /// An SDMA channel.
    Sdma,
    /// An AIC core's MTE2 (GM -> L1).
    L1Load,
    /// An AIC core's FIXPIPE (L0C -> GM).
    Fixpipe,
}

impl EngineKind {
    /// The order of a chip's engine resources (after its HBM and ingress port).
    pub const ORDER: [EngineKind; 5] =
        [EngineKind::Mte2, EngineKind::Mte3, EngineKind::Sdma, EngineKind::L1Load, EngineKind::Fixpipe];

    /// The name a resource of this kind carries, before `{chip}.{index}`.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Mte2 | EngineKind::L1Load => "mte2",
            EngineKind::Mte3 => "mte3",
            EngineKind::Sdma => "sdma",
            EngineKind::Fixpipe => "fixpipe",
        }
    }
}

/// One engine of a chip: its kind, resource name (`mte2`, `mte3`, `sdma`, `fixpipe`), its
/// index among the chip's cores (or SDMA channels) and its rate.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Engine {
    /// What it is.
    pub kind: EngineKind,
    /// The name a resource of this engine carries, before `{chip}.{index}`.
    pub name: &'static str,
    /// The core (AIV `0..cores`, AIC `cores..`) or SDMA channel it belongs to.
    pub index: usize,
    /// Its rate (`None` = unlimited).
    pub rate: Option<Bandwidth>,
}

impl ChipPaths {
    /// `cores` cores whose engines and HBM never limit the rate, and no SDMA channels.
    pub fn unlimited(cores: usize) -> ChipPaths {
        ChipPaths {
            cores,
            mte2: None,
            mte3: None,
            hbm: None,
            sdma_channels: 0,
            sdma: None,
            cube_cores: 0,
            gm_to_l1: None,
            l0c_to_gm: None,
        }
    }

    /// How many engines [`ChipPaths::engines`] lists (saturating).
    pub fn engine_count(&self) -> usize {
        EngineKind::ORDER.iter().fold(0usize, |n, &k| n.saturating_add(self.group(k).0.len()))
    }

    /// The indices (cores, or SDMA channels) engines of `kind` have, and their rate.
    fn group(&self, kind: EngineKind) -> (std::ops::Range<usize>, Option<Bandwidth>) {
        let (aiv, aic) = (0..self.cores, self.cores..self.cores.saturating_add(self.cube_cores));
        match kind {
            EngineKind::Mte2 => (aiv, self.mte2),
            EngineKind::Mte3 => (aiv, self.mte3),
            EngineKind::Sdma => (0..self.sdma_channels, self.sdma),
            EngineKind::L1Load => (aic, self.gm_to_l1),
            EngineKind::Fixpipe => (aic, self.l0c_to_gm),
        }
    }

    /// The chip's engines in the order its resources are numbered (after its HBM and port):
    /// [`EngineKind::ORDER`], each kind's engines by index.
    pub fn engines(&self) -> impl Iterator<Item = Engine> + '_ {
        EngineKind::ORDER.into_iter().flat_map(move |kind| {
            let (range, rate) = self.group(kind);
            range.map(move |index| Engine { kind, name: kind.name(), index, rate })
        })
    }

    /// Where engine `index` (a core, or an SDMA channel) of `kind` sits in
    /// [`ChipPaths::engines`], if the chip has it.
    pub fn engine_offset(&self, kind: EngineKind, index: usize) -> Option<usize> {
        let before =
            EngineKind::ORDER.iter().take_while(|&&k| k != kind).map(|&k| self.group(k).0.len()).sum::<usize>();
        let range = self.group(kind).0;
        range.contains(&index).then(|| before + (index - range.start))
    }
}

impl ChipModel {
    /// The chip's data paths: its AIV cores' MTE engines, its HBM, its SDMA channels and its
    /// AIC cores' engines, with their rates.
    pub fn paths(&self) -> ChipPaths {
        ChipPaths {
            cores: self.aiv_cores(),
            mte2: self.dma_rate(DmaDir::GmToUb),
            mte3: self.dma_rate(DmaDir::UbToGm),
            hbm: self.hbm_rate(),
            sdma_channels: self.sdma().map_or(0, |s| s.channels),
            sdma: self.sdma().and_then(|s| s.rate),
            cube_cores: self.cube().map_or(0, |c| c.cores),
            gm_to_l1: self.cube().and_then(|c| c.gm_to_l1.rate),
            l0c_to_gm: self.cube().and_then(|c| c.l0c_to_gm.rate),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engines_are_listed_in_resource_order() {
        let gb = |g| Bandwidth::from_gbps_f64(g);
        let p = ChipPaths {
            sdma_channels: 1,
            sdma: gb(5.0),
            cube_cores: 1,
            gm_to_l1: gb(20.0),
            mte3: gb(10.0),
            ..ChipPaths::unlimited(2)
        };
        let got: Vec<(&str, usize, Option<Bandwidth>)> = p.engines().map(|e| (e.name, e.index, e.rate)).collect();
        assert_eq!(
            got,
            vec![
                ("mte2", 0, None),
                ("mte2", 1, None),
                ("mte3", 0, gb(10.0)),
                ("mte3", 1, gb(10.0)),
                ("sdma", 0, gb(5.0)),
                ("mte2", 2, gb(20.0)),
                ("fixpipe", 2, None),
            ]
        );
        assert_eq!(p.engine_count(), got.len());
    }

    #[test]
    fn every_engine_offset_is_its_place_in_the_list_and_missing_ones_have_none() {
        let p = ChipPaths { sdma_channels: 3, cube_cores: 2, ..ChipPaths::unlimited(4) };
        for (at, e) in p.engines().enumerate() {
            assert_eq!(p.engine_offset(e.kind, e.index), Some(at), "{e:?}");
        }
        assert_eq!(p.engine_offset(EngineKind::Mte2, 4), None, "core 4 is an AIC core: no AIV MTE2");
        assert_eq!(p.engine_offset(EngineKind::Fixpipe, 1), None, "AIV core 1 has no FIXPIPE");
        assert_eq!(p.engine_offset(EngineKind::Sdma, 3), None);
        assert_eq!(p.engine_offset(EngineKind::L1Load, 5), Some(4 + 4 + 3 + 1));
    }
}
