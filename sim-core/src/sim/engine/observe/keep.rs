//! How each argument of a fact is kept in a split run's recording and lent back at its
//! replay: one [`Keep`] per argument type, which the list of facts
//! ([`for_each_fact`](crate::sim::observe::for_each_fact)) names, so the recorded `Fact`, the
//! recorder and the replay are generated from that list alone.

use crate::base::addr::{CellRef, Place};
use crate::base::signal::{Cond, NotifyOp};
use crate::base::time::SimTime;
use crate::results::trace::LinkBusy;
use crate::sim::observe::{
    BlockStart, CoreId, EqList, EqWaiters, Ids, MemRegion, OpAt, OpId, OpInfo, SdmaId, SignalCell, SignalCells, WriteId,
};
use rustc_hash::FxHashMap;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::fmt::Debug;
use std::sync::Arc;

/// One argument type of the [`Observe`](crate::sim::observe::Observe) facts, kept and lent
/// back. It is implemented on `fn(Arg)`, the argument type as a function pointer's
/// parameter, so that a type that borrows (`SignalCell<'_>`) names one type without a
/// lifetime to declare where the recorded `Fact` spells its fields.
pub(crate) trait Keep {
    /// The argument as an observer's method takes it.
    type Arg<'a>;
    /// The argument owned, as a recording keeps it and sends it to another process.
    type Kept: Clone + Debug + Serialize + DeserializeOwned;
    /// What the replay lends from a kept argument: the argument itself, or what it refers to.
    type View<'a>;

    /// The argument, owned.
    fn keep(arg: Self::Arg<'_>) -> Self::Kept;

    /// The kept argument with its ids numbered as one engine would have numbered them (most
    /// arguments carry no id).
    fn renumber(kept: Self::Kept, _ids: &mut Renumber<'_>) -> Self::Kept {
        kept
    }

    /// What the replay lends out of the kept argument.
    fn view(kept: &Self::Kept) -> Self::View<'_>;

    /// The argument as the observer's method takes it.
    fn pass<'a>(view: &'a Self::View<'a>) -> Self::Arg<'a>;
}

/// A kept argument whose bytes on the wire are its parts as crossings carry them
/// (`wire.rs` implements its serde).
#[derive(Clone, Debug)]
pub(crate) struct Wired<T>(pub(crate) T);

/// Ids as one engine would have numbered them: in order of first appearance.
#[derive(Default)]
pub(crate) struct IdMap {
    op: FxHashMap<OpId, OpId>,
    write: FxHashMap<WriteId, WriteId>,
    sdma: FxHashMap<SdmaId, SdmaId>,
}

/// The replay's numbering of ids: the map so far, and the next id of each kind.
pub(crate) struct Renumber<'a> {
    pub(super) ids: &'a mut Ids,
    pub(super) map: &'a mut IdMap,
}

impl Renumber<'_> {
    fn op(&mut self, id: OpId) -> OpId {
        *self.map.op.entry(id).or_insert_with(|| self.ids.op())
    }

    fn write(&mut self, id: WriteId) -> WriteId {
        *self.map.write.entry(id).or_insert_with(|| self.ids.write())
    }

    fn sdma(&mut self, id: SdmaId) -> SdmaId {
        *self.map.sdma.entry(id).or_insert_with(|| self.ids.sdma())
    }
}

/// Arguments kept as they are (plain values); `|kept, ids| ...` numbers the ids of those that
/// carry some.
macro_rules! kept_as_is {
    ($($t:ty $(=> |$k:ident, $ids:ident| $renumber:expr)?;)*) => {$(
        impl Keep for fn($t) {
            type Arg<'a> = $t;
            type Kept = $t;
            type View<'a> = $t;
            fn keep(arg: $t) -> $t {
                arg
            }
            $(
                fn renumber($k: $t, $ids: &mut Renumber<'_>) -> $t {
                    $renumber
                }
            )?
            fn view(kept: &$t) -> $t {
                *kept
            }
            fn pass(view: &$t) -> $t {
                *view
            }
        }
    )*};
}

kept_as_is! {
    usize;
    u64;
    i32;
    bool;
    SimTime;
    Cond;
    NotifyOp;
    Option<usize>;
    (i32, i32);
    OpId => |k, ids| ids.op(k);
    WriteId => |k, ids| ids.write(k);
    SdmaId => |k, ids| ids.sdma(k);
    Option<OpId> => |k, ids| k.map(|id| ids.op(id));
    (SdmaId, OpId) => |k, ids| (ids.sdma(k.0), ids.op(k.1));
    (SdmaId, WriteId) => |k, ids| (ids.sdma(k.0), ids.write(k.1));
}

/// Arguments kept as an owned copy and lent back by reference.
macro_rules! kept_by_ref {
    ($($t:ty => $kept:ty;)*) => {$(
        impl Keep for fn(&$t) {
            type Arg<'a> = &'a $t;
            type Kept = $kept;
            type View<'a> = &'a $t;
            fn keep(arg: &$t) -> $kept {
                arg.to_owned()
            }
            fn view(kept: &$kept) -> &$t {
                kept
            }
            fn pass<'a>(view: &'a &'a $t) -> &'a $t {
                view
            }
        }
    )*};
}

kept_by_ref! {
    [usize] => Vec<usize>;
    LinkBusy => LinkBusy;
}

impl Keep for fn(&OpInfo) {
    type Arg<'a> = &'a OpInfo;
    type Kept = Wired<OpInfo>;
    type View<'a> = &'a OpInfo;
    fn keep(op: &OpInfo) -> Wired<OpInfo> {
        Wired(op.clone())
    }
    fn renumber(kept: Wired<OpInfo>, ids: &mut Renumber<'_>) -> Wired<OpInfo> {
        Wired(OpInfo { id: ids.op(kept.0.id), ..kept.0 })
    }
    fn view(kept: &Wired<OpInfo>) -> &OpInfo {
        &kept.0
    }
    fn pass<'a>(view: &'a &'a OpInfo) -> &'a OpInfo {
        view
    }
}

impl Keep for fn(CoreId) {
    type Arg<'a> = CoreId;
    /// The core's actor and the cores per chip.
    type Kept = (usize, usize);
    type View<'a> = CoreId;
    fn keep(core: CoreId) -> (usize, usize) {
        (core.actor, core.cores)
    }
    fn view(&(actor, cores): &(usize, usize)) -> CoreId {
        CoreId::new(actor, cores)
    }
    fn pass(view: &CoreId) -> CoreId {
        *view
    }
}

impl Keep for fn(OpAt) {
    type Arg<'a> = OpAt;
    type Kept = Wired<OpAt>;
    type View<'a> = OpAt;
    fn keep(at: OpAt) -> Wired<OpAt> {
        Wired(at)
    }
    fn view(kept: &Wired<OpAt>) -> OpAt {
        kept.0
    }
    fn pass(view: &OpAt) -> OpAt {
        *view
    }
}

impl Keep for fn(SignalCell<'_>) {
    type Arg<'a> = SignalCell<'a>;
    type Kept = Wired<CellRef>;
    type View<'a> = SignalCell<'a>;
    fn keep(cell: SignalCell<'_>) -> Wired<CellRef> {
        Wired(cell.0.clone())
    }
    fn view(kept: &Wired<CellRef>) -> SignalCell<'_> {
        SignalCell(&kept.0)
    }
    fn pass<'a>(view: &'a SignalCell<'a>) -> SignalCell<'a> {
        *view
    }
}

impl Keep for fn(SignalCells<'_>) {
    type Arg<'a> = SignalCells<'a>;
    type Kept = Wired<Vec<CellRef>>;
    type View<'a> = SignalCells<'a>;
    fn keep(cells: SignalCells<'_>) -> Wired<Vec<CellRef>> {
        Wired(cells.0.to_vec())
    }
    fn view(kept: &Wired<Vec<CellRef>>) -> SignalCells<'_> {
        SignalCells(&kept.0)
    }
    fn pass<'a>(view: &'a SignalCells<'a>) -> SignalCells<'a> {
        *view
    }
}

impl Keep for fn((SignalCells<'_>, Cond)) {
    type Arg<'a> = (SignalCells<'a>, Cond);
    type Kept = (Wired<Vec<CellRef>>, Cond);
    type View<'a> = (SignalCells<'a>, Cond);
    fn keep((cells, cond): (SignalCells<'_>, Cond)) -> Self::Kept {
        (<fn(SignalCells<'_>)>::keep(cells), cond)
    }
    fn view((cells, cond): &Self::Kept) -> (SignalCells<'_>, Cond) {
        (SignalCells(&cells.0), *cond)
    }
    fn pass<'a>(view: &'a (SignalCells<'a>, Cond)) -> (SignalCells<'a>, Cond) {
        *view
    }
}

impl Keep for fn(MemRegion<'_>) {
    type Arg<'a> = MemRegion<'a>;
    type Kept = Wired<Place>;
    type View<'a> = MemRegion<'a>;
    fn keep(region: MemRegion<'_>) -> Wired<Place> {
        Wired(region.0.clone())
    }
    fn view(kept: &Wired<Place>) -> MemRegion<'_> {
        MemRegion(&kept.0)
    }
    fn pass<'a>(view: &'a MemRegion<'a>) -> MemRegion<'a> {
        *view
    }
}

impl Keep for fn((MemRegion<'_>, MemRegion<'_>)) {
    type Arg<'a> = (MemRegion<'a>, MemRegion<'a>);
    type Kept = (Wired<Place>, Wired<Place>);
    type View<'a> = (MemRegion<'a>, MemRegion<'a>);
    fn keep((src, dst): Self::Arg<'_>) -> Self::Kept {
        (Wired(src.0.clone()), Wired(dst.0.clone()))
    }
    fn view((src, dst): &Self::Kept) -> Self::View<'_> {
        (MemRegion(&src.0), MemRegion(&dst.0))
    }
    fn pass<'a>(view: &'a Self::View<'a>) -> Self::Arg<'a> {
        *view
    }
}

impl Keep for fn(EqWaiters<'_>) {
    type Arg<'a> = EqWaiters<'a>;
    /// Each `Eq` wait's expected value and actor, and the cores per chip.
    type Kept = (Vec<(i32, usize)>, usize);
    type View<'a> = EqWaiters<'a>;
    fn keep(eq: EqWaiters<'_>) -> Self::Kept {
        (eq.raw(), eq.cores)
    }
    fn view((list, cores): &Self::Kept) -> EqWaiters<'_> {
        EqWaiters { list: EqList::Known(list), cores: *cores }
    }
    fn pass<'a>(view: &'a EqWaiters<'a>) -> EqWaiters<'a> {
        *view
    }
}

/// A [`BlockStart`], owned.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct OwnedBlock {
    actor: usize,
    cores: usize,
    task: usize,
    #[serde(with = "crate::sim::engine::wire::facts::name")]
    name: Arc<str>,
    block: usize,
    lane: usize,
    lanes: usize,
    #[serde(with = "crate::sim::engine::wire::facts::dispatch")]
    dispatch: Option<(Arc<str>, usize)>,
}

impl Keep for fn(&BlockStart<'_>) {
    type Arg<'a> = &'a BlockStart<'a>;
    type Kept = OwnedBlock;
    type View<'a> = BlockStart<'a>;
    fn keep(b: &BlockStart<'_>) -> OwnedBlock {
        OwnedBlock {
            actor: b.core.actor,
            cores: b.core.cores,
            task: b.task,
            name: b.name.clone(),
            block: b.block,
            lane: b.lane,
            lanes: b.lanes,
            dispatch: b.dispatch.map(|(n, i)| (n.clone(), i)),
        }
    }
    fn view(b: &OwnedBlock) -> BlockStart<'_> {
        BlockStart {
            core: CoreId::new(b.actor, b.cores),
            task: b.task,
            name: &b.name,
            block: b.block,
            lane: b.lane,
            lanes: b.lanes,
            dispatch: b.dispatch.as_ref().map(|(n, i)| (n, *i)),
        }
    }
    fn pass<'a>(view: &'a BlockStart<'a>) -> &'a BlockStart<'a> {
        view
    }
}
