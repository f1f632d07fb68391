//! Notifies fired by more than one lane of one block: a notify outside a lane split runs on
//! every lane (reference §2.4, §6 #15), so the cell counts it twice.

use super::finding::{Finding, FindingKind, FindingSite};
use super::shadow::Access;
use crate::base::addr::{CellRef, MemKey};
use crate::base::signal::NotifyOp;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A call site: file, line, column.
type Here = (&'static str, u32, u32);

/// One notify call: the block instance (rank, dispatch instance, block, task), the call site,
/// the cell and what it writes.
type Call = (usize, usize, usize, Arc<str>, Here, MemKey, usize, bool, i32);

/// Which lanes fired each notify call.
#[derive(Debug, Default)]
pub(super) struct Lanes {
    fired: BTreeMap<Call, Vec<usize>>,
}

impl Lanes {
    /// Records that `lane` fired `acc` (a notify of `value` with `op` to `cell`); returns a
    /// finding the first time a second lane fires the same call.
    pub(super) fn notify(
        &mut self,
        acc: &Arc<Access>,
        lane: usize,
        cell: &CellRef,
        op: NotifyOp,
        value: i32,
    ) -> Option<Finding> {
        let loc = acc.location?;
        let w = &acc.who;
        let key: Call = (
            w.rank,
            w.instance,
            w.block,
            w.task.clone(),
            (loc.file(), loc.line(), loc.column()),
            cell.mem,
            cell.offset,
            op == NotifyOp::Set,
            value,
        );
        let lanes = self.fired.entry(key).or_default();
        if lanes.contains(&lane) {
            return None;
        }
        lanes.push(lane);
        if lanes.len() != 2 {
            return None;
        }
        let coords: Vec<String> = cell.coords.iter().map(|c| c.to_string()).collect();
        let target = format!("{}[{}]", cell.buffer, coords.join(", "));
        Some(Finding {
            kind: FindingKind::DuplicateNotify,
            time: acc.time,
            rank: cell.chip(),
            message: format!(
                "the notify at {loc} fired from lanes {} and {lane} of block {} of task `{}` on rank {}: `{target}` counts it \
                 once per lane; guard it with `if core.sub_block_idx() == 0`",
                lanes[0], w.block, w.task, w.rank
            ),
            sites: vec![FindingSite {
                rank: w.rank,
                block: w.block,
                task: w.task.to_string(),
                dispatch: w.dispatch.to_string(),
                op: acc.op.to_string(),
                target,
                time: acc.time,
                location: Some(loc.to_string()),
            }],
            count: 1,
            seed: None,
        })
    }
}
