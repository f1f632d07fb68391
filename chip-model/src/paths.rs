//! The data-path resources of one chip: which engines move bytes between a core and GM, how
//! many of each, at what rate. The fabric (interconnect) books packets on them; the chip model
//! says what they are.

use crate::ChipModel;
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

/// One engine of a chip: its resource name (`mte2`, `mte3`, `sdma`, `fixpipe`), its index
/// among the chip's cores (or SDMA channels) and its rate.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Engine {
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
        self.cores.saturating_add(self.cube_cores).saturating_mul(2).saturating_add(self.sdma_channels)
    }

    /// The chip's engines in the order its resources are numbered (after its HBM): every AIV
    /// core's MTE2, every AIV core's MTE3, every SDMA channel, every AIC core's MTE2 (GM -> L1),
    /// every AIC core's FIXPIPE (L0C -> GM).
    pub fn engines(&self) -> impl Iterator<Item = Engine> + '_ {
        let (aiv, aic) = (0..self.cores, self.cores..self.cores + self.cube_cores);
        let each = |name, range: std::ops::Range<usize>, rate| range.map(move |index| Engine { name, index, rate });
        each("mte2", aiv.clone(), self.mte2)
            .chain(each("mte3", aiv, self.mte3))
            .chain(each("sdma", 0..self.sdma_channels, self.sdma))
            .chain(each("mte2", aic.clone(), self.gm_to_l1))
            .chain(each("fixpipe", aic, self.l0c_to_gm))
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
}
