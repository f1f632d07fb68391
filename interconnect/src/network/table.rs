//! The resource table: every resource's booking state, by its number in the whole machine.
//! A partition of a run split at switches books only its own chips' resources and the links
//! (see [`sim_core::model::Network::fork`]), so it holds just those: the chip-side blocks of
//! its chips and every link, in two flat runs, where the whole machine's chip-side resources
//! would be most of the model (atlas950-superpod: 242 a chip, 127 MB for 8192 chips).
//! Another chip's resource, should a path ever book one, is made fresh on demand and kept
//! apart, so the table always behaves as a whole copy of the model would.

use super::resource::Resource;
use rustc_hash::FxHashMap;
use std::ops::Range;

/// The resources of a machine of `chips` chips of `per_chip` resources each (a fresh block
/// in `block`), then its links, holding the blocks of `held` chips only.
#[derive(Clone, Debug)]
pub(super) struct ResourceTable {
    /// One chip's block as a fresh chip has it (HBM, port, engines): the template the held
    /// blocks and any other chip's resource are made from.
    block: Vec<Resource>,
    /// Chips in the machine.
    chips: usize,
    /// The chips whose blocks `near` holds.
    held: Range<usize>,
    /// The number of `near[0]`: the first held chip's first resource.
    base: u32,
    /// The held chips' blocks, one after another, and, when the held chips run to the
    /// machine's last, the links after them (one run for a whole machine).
    near: Vec<Resource>,
    /// The links, when `near` does not hold them.
    links: Vec<Resource>,
    /// Whether `near` ends with the links (the held chips run to the machine's last).
    links_in_near: bool,
    /// The number of the first link.
    first_link: u32,
    /// Links in the machine.
    link_count: usize,
    /// Resources of chips outside `held` that were booked, made fresh at first use.
    other: FxHashMap<u32, Resource>,
}

impl ResourceTable {
    /// The table of `chips` chips of `block` each and `links`, holding chips `held` (cut to
    /// the machine). The numbers must fit in `u32` (the caller checks).
    pub(super) fn new(block: Vec<Resource>, chips: usize, links: Vec<Resource>, held: Range<usize>) -> ResourceTable {
        let first_link = u32::try_from(chips * block.len()).unwrap_or(u32::MAX);
        let link_count = links.len();
        let mut table = ResourceTable {
            block,
            chips,
            held: 0..0,
            base: 0,
            near: Vec::new(),
            links,
            links_in_near: false,
            first_link,
            link_count,
            other: FxHashMap::default(),
        };
        table.hold(held);
        table
    }

    /// Holds the blocks of chips `held` (cut to the machine), every resource fresh.
    pub(super) fn hold(&mut self, held: Range<usize>) {
        let start = held.start.min(self.chips);
        let held = start..held.end.clamp(start, self.chips);
        let mut links = if self.links_in_near {
            let at = self.near.len().saturating_sub(self.link_count);
            self.near.split_off(at)
        } else {
            std::mem::take(&mut self.links)
        };
        // The old blocks go before the new ones are made: a process trimming a whole model
        // never holds both.
        self.near = Vec::new();
        self.other = FxHashMap::default();
        for l in &mut links {
            l.reset();
        }
        // The links join the near run when the held chips end where the links begin.
        let links_in_near = held.end == self.chips;
        let per = self.block.len();
        let mut near = Vec::with_capacity(held.len() * per + if links_in_near { links.len() } else { 0 });
        for _ in held.clone() {
            near.extend(self.block.iter().cloned());
        }
        if links_in_near {
            near.append(&mut links);
        }
        self.near = near;
        self.links = links;
        self.links_in_near = links_in_near;
        self.base = u32::try_from(held.start * per).unwrap_or(u32::MAX);
        self.held = held;
    }

    /// A table of the same machine holding chips `held`, every resource fresh.
    pub(super) fn fresh_for(&self, held: Range<usize>) -> ResourceTable {
        let links = if self.links_in_near {
            &self.near[self.near.len().saturating_sub(self.link_count)..]
        } else {
            &self.links[..]
        };
        let links = links
            .iter()
            .map(|l| {
                let mut l = l.clone();
                l.reset();
                l
            })
            .collect();
        ResourceTable::new(self.block.clone(), self.chips, links, held)
    }

    /// The chips whose blocks are held.
    pub(super) fn held(&self) -> Range<usize> {
        self.held.clone()
    }

    /// Resources in the machine (held or not).
    pub(super) fn len(&self) -> usize {
        self.first_link as usize + self.link_count
    }

    /// Resources this table holds: the held blocks, the links, and any other chip's that
    /// was booked.
    pub(super) fn holding(&self) -> usize {
        self.near.len() + self.links.len() + self.other.len()
    }

    /// Resource `id`, if the machine has it: as it is, or fresh when it is another chip's
    /// that was never booked.
    #[inline]
    pub(super) fn get(&self, id: u32) -> Option<&Resource> {
        let i = id.wrapping_sub(self.base) as usize;
        if i < self.near.len() {
            return self.near.get(i);
        }
        self.get_far(id)
    }

    /// [`ResourceTable::get`] past the near run.
    #[inline(never)]
    fn get_far(&self, id: u32) -> Option<&Resource> {
        if let Some(l) = id.checked_sub(self.first_link) {
            return self.links.get(l as usize);
        }
        self.other.get(&id).or_else(|| self.block.get(id as usize % self.block.len().max(1)))
    }

    /// Resource `id` to book, if the machine has it (another chip's made at first use).
    #[inline]
    pub(super) fn get_mut(&mut self, id: u32) -> Option<&mut Resource> {
        let i = id.wrapping_sub(self.base) as usize;
        if i < self.near.len() {
            return self.near.get_mut(i);
        }
        self.get_far_mut(id)
    }

    /// [`ResourceTable::get_mut`] past the near run.
    #[inline(never)]
    fn get_far_mut(&mut self, id: u32) -> Option<&mut Resource> {
        if let Some(l) = id.checked_sub(self.first_link) {
            return self.links.get_mut(l as usize);
        }
        let fresh = self.block.get(id as usize % self.block.len().max(1))?.clone();
        Some(self.other.entry(id).or_insert(fresh))
    }

    /// Forgets every booking.
    pub(super) fn reset(&mut self) {
        for r in self.near.iter_mut().chain(&mut self.links) {
            r.reset();
        }
        self.other = FxHashMap::default();
    }
}
