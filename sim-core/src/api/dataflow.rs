//! Task dependencies from declared tensors, derived the way PyPTO's runtime TensorMap derives
//! them (simpler `tensormap_and_ringbuffer`: `compute_task_fanin` / `register_task_outputs`).
//!
//! Every task of a dispatch may declare tensors with a tag ([`ArgDir`]). Declarations are
//! processed in submission order, per task first every lookup, then every insert:
//!
//! - **Creator.** An `Output` declaration makes the task the *creator* of those bytes (PyPTO's
//!   `owner_task_id` of a fresh tensor). Every later declaration of overlapping bytes, whatever
//!   its tag, depends on the creator ("creator retention"). The bytes must be fresh: an earlier
//!   task of the dispatch declaring any of them is an error.
//! - **Modifier lookup (RAW, and WAW for `InOut`).** `Input` and `InOut` depend on every
//!   *modifier* entry whose bytes overlap theirs. An `InOut` removes the entries its bytes fully
//!   cover (later tasks reach those writers through it).
//! - **Modifier insert.** `InOut` and `OutputExisting` add an entry for their bytes.
//! - `OutputExisting` and `NoDep` look nothing up: they depend on the creator only.
//!
//! So the map tracks writers, never readers: there is **no write-after-read edge**, and
//! `OutputExisting` gets no write-after-write edge either. A task that overwrites bytes an
//! earlier task reads (or writes with `OutputExisting`) needs [`crate::Task::after`]; the
//! checker reports the race otherwise.
//!
//! The map is keyed on the memory (a GM buffer, or a domain's window) and compares **byte
//! ranges**, as the TensorMap keys on the buffer address and compares the regions of views:
//! two slices of one buffer that share no byte are independent. It lives for one dispatch;
//! dispatches of a chip already run one after another. Remote writes by peers into a window
//! are not declared and make no edge (window arguments make no DAG edge in PyPTO either).

use crate::api::program::{ArgDir, Dispatch, TaskId};
use crate::base::tensor::{Space, Tensor, merge_runs, resolve_region};

/// Which memory a tensor lives in, across chips (GM buffer, or a domain's windows).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum MemId {
    Gm(usize),
    Win(usize),
}

/// The bytes a whole view covers: its memory and its sorted, merged `(offset, len)` runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Footprint {
    pub(crate) mem: MemId,
    pub(crate) runs: Vec<(usize, usize)>,
}

impl Footprint {
    pub(crate) fn of(t: &Tensor) -> Footprint {
        let mem = match &t.0.space {
            Space::Gm { buf } => MemId::Gm(*buf),
            Space::Window { domain } => MemId::Win(domain.id),
        };
        let zeros = vec![0; t.shape().len()];
        let mut runs = resolve_region(t, &zeros, t.shape())
            .map_or_else(|_| vec![(t.0.base + t.0.start, t.nbytes())], |r| r.runs.to_vec());
        runs.sort_unstable();
        Footprint { mem, runs: merge_runs(runs.into_iter()) }
    }

    /// Whether the two share a byte.
    pub(crate) fn overlaps(&self, other: &Footprint) -> bool {
        if self.mem != other.mem {
            return false;
        }
        let (a, b) = (&self.runs, &other.runs);
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            let (a0, a1) = (a[i].0, a[i].0 + a[i].1);
            let (b0, b1) = (b[j].0, b[j].0 + b[j].1);
            if a0 < b1 && b0 < a1 {
                return true;
            }
            if a1 <= b1 {
                i += 1;
            } else {
                j += 1;
            }
        }
        false
    }

    /// Whether every byte of `inner` is one of ours.
    pub(crate) fn covers(&self, inner: &Footprint) -> bool {
        self.mem == inner.mem
            && inner.runs.iter().all(|&(o, l)| self.runs.iter().any(|&(so, sl)| so <= o && o + l <= so + sl))
    }
}

/// One declaration of an earlier task.
struct Entry {
    task: usize,
    dir: ArgDir,
    at: Footprint,
    tensor: Tensor,
}

/// The dependencies each task of `d` gets from its declarations (ids of earlier tasks,
/// ascending), or why the declarations are inconsistent.
pub(crate) fn derive(d: &Dispatch) -> Result<Vec<Vec<TaskId>>, String> {
    let mut creators: Vec<Entry> = Vec::new();
    let mut modifiers: Vec<Entry> = Vec::new();
    let mut uses: Vec<Entry> = Vec::new();
    let mut out = Vec::with_capacity(d.tasks.len());
    for (i, task) in d.tasks.iter().enumerate() {
        let decls: Vec<(ArgDir, Footprint, &Tensor)> =
            task.args.iter().map(|(dir, t)| (*dir, Footprint::of(t), t)).collect();
        let mut deps: Vec<usize> = Vec::new();
        for (dir, at, t) in &decls {
            if *dir == ArgDir::Output {
                if let Some(u) = uses.iter().find(|u| u.at.overlaps(at)) {
                    return Err(format!(
                        "task `{}` (#{i}) of dispatch `{}` declares {t:?} as output (PyPTO OUTPUT: bytes it creates), but the earlier task `{}` (#{}) already declares {:?} as {} and they share bytes; declare the overwrite as output_existing (ordered after the creator only) or inout (after the last writer)",
                        task.name,
                        d.name,
                        d.tasks[u.task].name,
                        u.task,
                        u.tensor,
                        u.dir.pypto_name()
                    ));
                }
                continue;
            }
            deps.extend(creators.iter().filter(|c| c.at.overlaps(at)).map(|c| c.task));
            if dir.reads() {
                deps.extend(modifiers.iter().filter(|m| m.at.overlaps(at)).map(|m| m.task));
                if *dir == ArgDir::InOut {
                    modifiers.retain(|m| !at.covers(&m.at));
                }
            }
        }
        for (dir, at, t) in decls {
            let entry = || Entry { task: i, dir, at: at.clone(), tensor: t.clone() };
            match dir {
                ArgDir::Output => creators.push(entry()),
                ArgDir::InOut | ArgDir::OutputExisting => modifiers.push(entry()),
                ArgDir::Input | ArgDir::NoDep => {}
            }
            uses.push(entry());
        }
        deps.sort_unstable();
        deps.dedup();
        out.push(deps.into_iter().map(TaskId).collect());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::program::Task;
    use crate::base::dtype::DType;
    use crate::base::tensor::TensorMeta;
    use std::sync::Arc;

    fn gm(buf: usize, shape: &[usize]) -> Tensor {
        let cap = shape.iter().product::<usize>() * 4;
        Tensor(Arc::new(TensorMeta::dense(format!("t{buf}").into(), Space::Gm { buf }, 0, cap, DType::F32, shape)))
    }

    fn task(name: &str) -> Task {
        Task::new(name, 1, |_| Ok(()))
    }

    fn deps(d: &Dispatch) -> Vec<Vec<usize>> {
        derive(d).unwrap().into_iter().map(|v| v.into_iter().map(|t| t.0).collect()).collect()
    }

    #[test]
    fn readers_follow_writers_and_writers_do_not_follow_readers() {
        let x = gm(0, &[4, 8]);
        let mut d = Dispatch::new("d");
        d.add(task("w").output_existing(&x));
        d.add(task("r1").input(&x));
        d.add(task("r2").input(&x));
        d.add(task("w2").output_existing(&x));
        d.add(task("r3").input(&x));
        d.add(task("rw").inout(&x));
        d.add(task("r4").input(&x));
        // No WAR (w2 after r1/r2) and no WAW for OUTPUT_EXISTING (w2 after w); INOUT sees both
        // writers and, covering them, replaces them for later readers.
        assert_eq!(deps(&d), vec![vec![], vec![0], vec![0], vec![], vec![0, 3], vec![0, 3], vec![5]]);
    }

    #[test]
    fn slices_that_share_no_byte_are_independent() {
        let x = gm(0, &[4, 8]);
        let (top, bottom) = (x.slice(&[0, 0], &[2, 8]).unwrap(), x.slice(&[2, 0], &[2, 8]).unwrap());
        let (left, right) = (x.slice(&[0, 0], &[4, 4]).unwrap(), x.slice(&[0, 4], &[4, 4]).unwrap());
        let mut d = Dispatch::new("d");
        d.add(task("top").output_existing(&top));
        d.add(task("bottom").output_existing(&bottom));
        d.add(task("left").input(&left));
        d.add(task("right_rows").input(&right.slice(&[2, 0], &[2, 4]).unwrap()));
        d.add(task("other").input(&gm(1, &[4, 8])));
        assert_eq!(deps(&d), vec![vec![], vec![], vec![0, 1], vec![1], vec![]]);
        // Column halves interleave row by row but share no byte.
        assert!(!Footprint::of(&left).overlaps(&Footprint::of(&right)));
        assert!(Footprint::of(&x).covers(&Footprint::of(&right)));
    }

    #[test]
    fn the_creator_orders_every_later_use() {
        let x = gm(0, &[2, 8]);
        let mut d = Dispatch::new("d");
        d.add(task("make").output(&x));
        d.add(task("pass").no_dep(&x));
        d.add(task("over").output_existing(&x.slice(&[0, 0], &[1, 8]).unwrap()));
        d.add(task("read").input(&x));
        assert_eq!(deps(&d), vec![vec![], vec![0], vec![0], vec![0, 2]]);
    }

    #[test]
    fn an_output_over_bytes_already_used_is_an_error() {
        let x = gm(0, &[2, 8]);
        let mut d = Dispatch::new("d");
        d.add(task("reader").input(&x.slice(&[1, 0], &[1, 8]).unwrap()));
        d.add(task("maker").output(&x));
        let e = derive(&d).unwrap_err();
        assert!(e.contains("task `maker` (#1)") && e.contains("`reader` (#0)") && e.contains("as INPUT"), "{e}");
    }
}
