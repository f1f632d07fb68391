//! Host-allocated memory as kernels see it: GM tensors (one copy per chip) and window buffers
//! (one symmetric copy per member of a comm domain), viewed with a dtype and a shape.

use crate::base::dtype::DType;
use crate::base::error::SimError;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// `DomainInfo::rank_by_chip`'s mark of a chip outside the domain.
const NOT_MEMBER: u32 = u32::MAX;

/// A comm domain: an ordered subset of the world's chips. A chip's dense rank in the domain is
/// its index in `members`.
#[derive(Debug)]
pub struct DomainInfo {
    pub(crate) id: usize,
    pub(crate) name: String,
    pub(crate) members: Vec<usize>,
    /// Dense rank by world rank (`NOT_MEMBER` for a chip outside the domain): every window
    /// access asks it, so it is one index, not a search of `members`.
    rank_by_chip: Vec<u32>,
    /// The host released the domain and a run fence freed its windows; set only between runs.
    pub(crate) freed: AtomicBool,
}

impl PartialEq for DomainInfo {
    fn eq(&self, other: &DomainInfo) -> bool {
        (self.id, &self.name, &self.members) == (other.id, &other.name, &other.members)
    }
}

impl Eq for DomainInfo {}

impl DomainInfo {
    pub(crate) fn new(id: usize, name: &str, members: &[usize]) -> DomainInfo {
        let mut rank_by_chip = vec![NOT_MEMBER; members.iter().max().map_or(0, |&m| m + 1)];
        for (rank, &chip) in members.iter().enumerate().rev() {
            rank_by_chip[chip] = u32::try_from(rank).unwrap_or(NOT_MEMBER);
        }
        DomainInfo {
            id,
            name: name.to_string(),
            members: members.to_vec(),
            rank_by_chip,
            freed: AtomicBool::new(false),
        }
    }

    /// Whether the domain was released and its windows freed ([`crate::World::release_domain`]).
    pub fn is_freed(&self) -> bool {
        self.freed.load(Ordering::Acquire)
    }

    /// The domain's name (`comm_d0`, ...).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// World ranks (chips) of the members, in dense-rank order.
    pub fn members(&self) -> &[usize] {
        &self.members
    }

    /// Number of members (`pld.nranks`).
    pub fn size(&self) -> usize {
        self.members.len()
    }

    /// Dense rank of world rank `chip`, if it is a member.
    pub fn rank_of(&self, chip: usize) -> Option<usize> {
        self.rank_by_chip.get(chip).filter(|&&r| r != NOT_MEMBER).map(|&r| r as usize)
    }
}

/// A handle to a comm domain created by the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Domain(pub(crate) Arc<DomainInfo>);

impl Domain {
    /// The domain's description.
    pub fn info(&self) -> &DomainInfo {
        &self.0
    }

    /// Number of ranks in the domain.
    pub fn size(&self) -> usize {
        self.0.members.len()
    }

    /// World ranks of the members, in dense-rank order.
    pub fn members(&self) -> &[usize] {
        &self.0.members
    }
}

/// Which memory a tensor lives in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Space {
    /// A plain GM (HBM) buffer: every chip has its own copy; only that chip's kernels see it.
    Gm { buf: usize },
    /// A window buffer of a comm domain: every member has a copy at the same window offset,
    /// and peers reach it with remote operations.
    Window { domain: Arc<DomainInfo> },
}

#[derive(Debug)]
pub(crate) struct TensorMeta {
    pub(crate) name: Arc<str>,
    pub(crate) space: Space,
    /// Byte offset of the buffer inside its memory (window offset; 0 for GM buffers).
    pub(crate) base: usize,
    /// Bytes allocated for the buffer (32-byte rounded for windows).
    pub(crate) capacity: usize,
    pub(crate) dtype: DType,
    pub(crate) shape: Vec<usize>,
    /// Where element 0 of this view sits, in bytes from `base` (non-zero for slices).
    pub(crate) start: usize,
    /// Element strides of a slice (`None`: dense row-major over `shape`).
    pub(crate) strides: Option<Vec<usize>>,
}

impl TensorMeta {
    /// A dense row-major view of a whole allocation.
    pub(crate) fn dense(
        name: Arc<str>,
        space: Space,
        base: usize,
        capacity: usize,
        dtype: DType,
        shape: &[usize],
    ) -> Self {
        TensorMeta { name, space, base, capacity, dtype, shape: shape.to_vec(), start: 0, strides: None }
    }
}

/// Row-major element strides of `shape`.
fn dense_strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1];
    }
    s
}

/// A typed, shaped view of a GM buffer or a window buffer. Cheap to clone; kernels capture
/// tensors and address them with element offsets.
#[derive(Clone)]
pub struct Tensor(pub(crate) Arc<TensorMeta>);

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match &self.0.space {
            Space::Gm { .. } => "gm".to_string(),
            Space::Window { domain } => format!("window@{}", domain.name),
        };
        write!(f, "{}<{}>{:?} ({kind})", self.0.name, self.0.dtype, self.0.shape)
    }
}

impl Tensor {
    /// The buffer's name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// Element type of this view.
    pub fn dtype(&self) -> DType {
        self.0.dtype
    }

    /// Shape of this view.
    pub fn shape(&self) -> &[usize] {
        &self.0.shape
    }

    /// Number of elements in this view.
    pub fn numel(&self) -> usize {
        self.0.shape.iter().product()
    }

    /// Bytes covered by this view.
    pub fn nbytes(&self) -> usize {
        self.numel() * self.0.dtype.size()
    }

    /// Bytes of the underlying buffer (32-byte rounded for windows) from this view's start.
    /// Views may reach up to here, e.g. for 32-byte-rounded tail reads.
    pub fn capacity_bytes(&self) -> usize {
        self.0.capacity - self.0.start
    }

    /// Whether this is a window buffer (reachable by peers).
    pub fn is_window(&self) -> bool {
        matches!(self.0.space, Space::Window { .. })
    }

    /// The comm domain of a window buffer.
    pub fn domain(&self) -> Option<&DomainInfo> {
        match &self.0.space {
            Space::Window { domain } => Some(domain),
            Space::Gm { .. } => None,
        }
    }

    /// The comm domain of a window buffer, as a handle (to dispatch on its members).
    pub fn domain_handle(&self) -> Option<Domain> {
        match &self.0.space {
            Space::Window { domain } => Some(Domain(domain.clone())),
            Space::Gm { .. } => None,
        }
    }

    /// Which memory the tensor lives in.
    pub fn space(&self) -> &Space {
        &self.0.space
    }

    /// Byte offset of the buffer inside its window (0 for GM buffers).
    pub fn window_offset(&self) -> usize {
        self.0.base
    }

    /// Another view of the same allocation with a new dtype and shape (`pld.window(buf, shape,
    /// dtype=...)`), starting where this view starts. The view must fit in the allocation; a
    /// slice can be viewed only when its elements are contiguous.
    pub fn view(&self, dtype: DType, shape: &[usize]) -> Result<Tensor, SimError> {
        let need = shape.iter().product::<usize>() * dtype.size();
        if shape.is_empty() || shape.contains(&0) {
            return Err(SimError::invalid(format!(
                "view of `{}`: shape {shape:?} must be non-empty with positive dims",
                self.name()
            )));
        }
        if !self.is_contiguous() {
            return Err(SimError::invalid(format!(
                "view of `{}`: this slice (shape {:?} of a larger tensor) is not contiguous; slice whole rows to view it",
                self.name(),
                self.shape()
            )));
        }
        let room = self.capacity_bytes();
        if need > room {
            return Err(SimError::invalid(format!(
                "view of `{}` as {dtype}{shape:?} needs {need} bytes but the buffer has {room} from the view's start; allocate a larger buffer or view fewer elements",
                self.name(),
            )));
        }
        let meta = TensorMeta {
            start: self.0.start,
            ..TensorMeta::dense(self.0.name.clone(), self.0.space.clone(), self.0.base, self.0.capacity, dtype, shape)
        };
        Ok(Tensor(Arc::new(meta)))
    }

    /// The part `offsets .. offsets + shape` of this tensor as a tensor of its own (`win[a:b]`,
    /// `pl.tensor.slice`): same memory, same dtype, bounds checked against this view. Kernels
    /// address it from its own origin; peers reach a window slice at the same place.
    pub fn slice(&self, offsets: &[usize], shape: &[usize]) -> Result<Tensor, SimError> {
        let n = self.shape().len();
        if offsets.len() != n || shape.len() != n {
            return Err(SimError::invalid(format!(
                "slice of `{}` (shape {:?}): give one offset and one extent per dimension, got {offsets:?} and {shape:?}",
                self.name(),
                self.shape()
            )));
        }
        for d in 0..n {
            if shape[d] == 0 || offsets[d].checked_add(shape[d]).is_none_or(|end| end > self.shape()[d]) {
                return Err(SimError::invalid(format!(
                    "slice {offsets:?} + {shape:?} of `{}` falls outside its shape {:?} (dimension {d}: {} + {} > {}) or is empty",
                    self.name(),
                    self.shape(),
                    offsets[d],
                    shape[d],
                    self.shape()[d]
                )));
            }
        }
        let strides = self.strides();
        let skip: usize = offsets.iter().zip(&strides).map(|(o, s)| o * s).sum();
        Ok(Tensor(Arc::new(TensorMeta {
            start: self.0.start + skip * self.dtype().size(),
            strides: Some(strides),
            shape: shape.to_vec(),
            ..TensorMeta::dense(
                self.0.name.clone(),
                self.0.space.clone(),
                self.0.base,
                self.0.capacity,
                self.dtype(),
                &[],
            )
        })))
    }

    /// Element strides of this view, per dimension.
    pub fn strides(&self) -> Vec<usize> {
        self.0.strides.clone().unwrap_or_else(|| dense_strides(self.shape()))
    }

    /// Whether the view's elements are one contiguous run (every dense tensor; a slice of
    /// whole trailing rows).
    pub fn is_contiguous(&self) -> bool {
        let dense = dense_strides(self.shape());
        self.strides().iter().zip(&dense).zip(self.shape()).all(|((s, d), &n)| n == 1 || s == d)
    }

    /// Whether two tensors are views of the same bytes of one allocation (slices that do not
    /// share a byte are not).
    pub fn same_buffer(&self, other: &Tensor) -> bool {
        if self.0.space != other.0.space || self.0.base != other.0.base {
            return false;
        }
        let (a, b) = (self.byte_span(), other.byte_span());
        a.0 < b.1 && b.0 < a.1
    }

    /// The first and one-past-last byte (from the allocation's start) the view can touch.
    fn byte_span(&self) -> (usize, usize) {
        let last: usize = self.shape().iter().zip(self.strides()).map(|(n, s)| (n - 1) * s).sum();
        (self.0.start, self.0.start + (last + 1) * self.dtype().size())
    }
}

/// The `(byte offset, length)` runs of a [`Region`], in row-major order. Almost every region
/// is one contiguous run, so that run is kept inline and only two or more go to the heap: a
/// resolved operand then costs no allocation. Reads as a slice of runs; equal when the runs
/// are, however they are stored.
#[derive(Clone)]
pub(crate) enum Runs {
    /// Exactly one run, inline.
    One([(usize, usize); 1]),
    /// Any other number of runs (none, or two and more); a boxed slice, so a `Runs` is as
    /// small as the `Vec` it replaces.
    Many(Box<[(usize, usize)]>),
}

impl Runs {
    /// The single run `(offset, len)`.
    pub(crate) fn one(offset: usize, len: usize) -> Runs {
        Runs::One([(offset, len)])
    }
}

impl From<Vec<(usize, usize)>> for Runs {
    /// Keeps a single run inline (dropping the vector); boxes any other number.
    fn from(v: Vec<(usize, usize)>) -> Runs {
        match v.as_slice() {
            &[run] => Runs::One([run]),
            _ => Runs::Many(v.into_boxed_slice()),
        }
    }
}

impl std::ops::Deref for Runs {
    type Target = [(usize, usize)];

    fn deref(&self) -> &[(usize, usize)] {
        match self {
            Runs::One(r) => r,
            Runs::Many(rs) => rs,
        }
    }
}

impl<'a> IntoIterator for &'a Runs {
    type Item = &'a (usize, usize);
    type IntoIter = std::slice::Iter<'a, (usize, usize)>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl PartialEq for Runs {
    fn eq(&self, other: &Runs) -> bool {
        **self == **other
    }
}

impl Eq for Runs {}

impl fmt::Debug for Runs {
    /// As the list of runs (the form a `Vec` printed).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// A rectangular part of a tensor resolved to byte runs inside its memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Region {
    /// `(byte offset, length)` runs, in row-major order, merged where contiguous.
    pub(crate) runs: Runs,
    /// Rows of the tile this region maps to (product of all but the last extent).
    pub(crate) rows: usize,
    /// Columns (the last extent).
    pub(crate) cols: usize,
}

impl Region {
    /// Total bytes in the region.
    pub(crate) fn bytes(&self) -> usize {
        self.runs.iter().map(|r| r.1).sum()
    }

    /// Lowest and one-past-highest byte touched.
    pub(crate) fn span(&self) -> (usize, usize) {
        let lo = self.runs.first().map_or(0, |r| r.0);
        let hi = self.runs.last().map_or(0, |r| r.0 + r.1);
        (lo, hi)
    }
}

/// Resolves `offsets`/`extent` (both of the tensor's rank) into byte runs, or explains why the
/// region does not fit.
pub(crate) fn resolve_region(t: &Tensor, offsets: &[usize], extent: &[usize]) -> Result<Region, String> {
    check_region(t, offsets, extent)?;
    let n = extent.len();
    let cols = extent[n - 1];
    if let Some(run) = dense_single_run(t, offsets, extent) {
        return Ok(Region { runs: Runs::one(run.0, run.1), rows: extent[..n - 1].iter().product(), cols });
    }
    let starts = row_starts(t, offsets, extent)?;
    let runs = merge_runs(starts.iter().map(|&s| (s, cols * t.dtype().size()))).into();
    Ok(Region { runs, rows: starts.len(), cols })
}

/// The single byte run of a checked region of a dense tensor when the region is contiguous
/// (leading extents of one, then whole trailing dimensions): the common case, resolved
/// without listing rows. `None` sends other regions to the general row walk.
fn dense_single_run(t: &Tensor, offsets: &[usize], extent: &[usize]) -> Option<(usize, usize)> {
    if t.0.strides.is_some() {
        return None;
    }
    let shape = t.shape();
    let n = shape.len();
    let k = extent.iter().position(|&e| e != 1).unwrap_or(n - 1);
    if (k + 1..n).any(|d| extent[d] != shape[d]) {
        return None;
    }
    let (mut lin, mut stride) = (0usize, 1usize);
    for d in (0..n).rev() {
        lin += offsets[d] * stride;
        stride *= shape[d];
    }
    let es = t.dtype().size();
    let len = extent.iter().product::<usize>() * es;
    Some((t.0.base + t.0.start + lin * es, len))
}

/// Checks that `offsets` / `extent` name a non-empty region inside `t` whose rows are whole
/// elements.
fn check_region(t: &Tensor, offsets: &[usize], extent: &[usize]) -> Result<(), String> {
    let shape = t.shape();
    let n = shape.len();
    if offsets.len() != n || extent.len() != n {
        return Err(format!(
            "`{}` has rank {n} (shape {shape:?}) but offsets {offsets:?} and shape {extent:?} were given; pass one value per dimension",
            t.name()
        ));
    }
    for d in 0..n {
        if extent[d] == 0 {
            return Err(format!("shape {extent:?} has a zero dimension; every extent must be positive"));
        }
        if offsets[d].checked_add(extent[d]).is_none_or(|end| end > shape[d]) {
            return Err(format!(
                "offsets {offsets:?} + shape {extent:?} fall outside `{}` of shape {shape:?} (dimension {d}: {} + {} > {})",
                t.name(),
                offsets[d],
                extent[d],
                shape[d]
            ));
        }
    }
    if t.0.strides.as_ref().is_some_and(|s| s[n - 1] != 1) {
        return Err(format!(
            "`{}` has a non-unit stride in its last dimension; slices keep whole elements rows",
            t.name()
        ));
    }
    Ok(())
}

/// Merges adjacent `(offset, len)` runs.
pub(crate) fn merge_runs(runs: impl Iterator<Item = (usize, usize)>) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (start, len) in runs {
        match out.last_mut() {
            Some(last) if last.0 + last.1 == start => last.1 += len,
            _ => out.push((start, len)),
        }
    }
    out
}

/// Byte offset (inside the memory) of the start of every row of a region: the region viewed
/// as `[product of leading extents, last extent]`.
pub(crate) fn row_starts(t: &Tensor, offsets: &[usize], extent: &[usize]) -> Result<Vec<usize>, String> {
    check_region(t, offsets, extent)?;
    let n = t.shape().len();
    let es = t.dtype().size();
    let strides = t.strides();
    let rows: usize = extent[..n - 1].iter().product();
    let mut out = Vec::with_capacity(rows);
    let mut idx = vec![0usize; n - 1];
    for _ in 0..rows {
        let mut lin = offsets[n - 1];
        for d in 0..n - 1 {
            lin += (offsets[d] + idx[d]) * strides[d];
        }
        out.push(t.0.base + t.0.start + lin * es);
        for d in (0..n - 1).rev() {
            idx[d] += 1;
            if idx[d] < extent[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Ok(out)
}

/// Byte offset (inside the memory) of the element at `offsets`.
pub(crate) fn element_offset(t: &Tensor, offsets: &[usize]) -> Result<usize, String> {
    let shape = t.shape();
    let unit_last = t.0.strides.as_ref().is_none_or(|s| s.last() == Some(&1));
    if !unit_last || offsets.len() != shape.len() || offsets.iter().zip(shape).any(|(&o, &n)| o >= n) {
        // Refused: the region check words the error.
        let ones = vec![1; shape.len()];
        return resolve_region(t, offsets, &ones).map(|r| r.runs[0].0);
    }
    let lin: usize = match &t.0.strides {
        Some(strides) => offsets.iter().zip(strides).map(|(o, s)| o * s).sum(),
        None => {
            let (mut lin, mut stride) = (0, 1);
            for (o, n) in offsets.iter().zip(shape).rev() {
                lin += o * stride;
                stride *= n;
            }
            lin
        }
    };
    Ok(t.0.base + t.0.start + lin * t.dtype().size())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(shape: &[usize], base: usize) -> Tensor {
        let capacity = shape.iter().product::<usize>() * 4;
        Tensor(Arc::new(TensorMeta::dense("t".into(), Space::Gm { buf: 0 }, base, capacity, DType::F32, shape)))
    }

    #[test]
    fn a_domain_knows_the_dense_rank_of_its_members_only() {
        let d = DomainInfo::new(0, "d", &[5, 2, 9]);
        assert_eq!(
            [5, 2, 9, 0, 3, 10, usize::MAX].map(|c| d.rank_of(c)),
            [Some(0), Some(1), Some(2), None, None, None, None]
        );
        assert_eq!(DomainInfo::new(1, "empty", &[]).rank_of(0), None);
    }

    #[test]
    fn full_region_is_one_run() {
        let r = resolve_region(&tensor(&[4, 8], 64), &[0, 0], &[4, 8]).unwrap();
        assert_eq!(*r.runs, [(64, 128)]);
        assert_eq!((r.rows, r.cols), (4, 8));
    }

    /// One run is kept inline, any other number boxed; either way the runs read back in
    /// order, compare by content and print as a list.
    #[test]
    fn runs_store_one_run_inline_and_read_as_a_slice() {
        let one = Runs::one(8, 4);
        assert!(matches!(one, Runs::One(_)));
        assert!(matches!(Runs::from(vec![(8, 4)]), Runs::One(_)));
        assert_eq!(one, Runs::from(vec![(8, 4)]));
        assert_eq!(one, Runs::Many(vec![(8, 4)].into_boxed_slice()));
        let many = Runs::from(vec![(40, 12), (72, 12), (8, 4)]);
        assert!(matches!(many, Runs::Many(_)));
        assert_eq!((&many).into_iter().copied().collect::<Vec<_>>(), [(40, 12), (72, 12), (8, 4)]);
        assert_eq!((many.len(), many.first(), many.last()), (3, Some(&(40, 12)), Some(&(8, 4))));
        assert_ne!(many, Runs::from(vec![(40, 12), (8, 4), (72, 12)]));
        assert_ne!(one, many);
        assert!(Runs::from(Vec::new()).is_empty());
        assert_eq!(format!("{one:?} {many:?}"), "[(8, 4)] [(40, 12), (72, 12), (8, 4)]");
        let r = Region { runs: many, rows: 3, cols: 3 };
        assert_eq!((r.bytes(), r.span()), (28, (40, 12)));
    }

    #[test]
    fn sub_rectangle_gives_one_run_per_row() {
        let r = resolve_region(&tensor(&[4, 8], 0), &[1, 2], &[2, 3]).unwrap();
        assert_eq!(*r.runs, [(40, 12), (72, 12)]);
        assert_eq!(r.span(), (40, 84));
    }

    #[test]
    fn three_d_regions_flatten_leading_dims() {
        let r = resolve_region(&tensor(&[2, 3, 4], 0), &[1, 0, 0], &[1, 3, 4]).unwrap();
        assert_eq!(*r.runs, [(48, 48)]);
        assert_eq!((r.rows, r.cols), (3, 4));
    }

    #[test]
    fn out_of_bounds_names_the_dimension() {
        let e = resolve_region(&tensor(&[4, 8], 0), &[3, 0], &[2, 8]).unwrap_err();
        assert!(e.contains("dimension 0: 3 + 2 > 4"), "{e}");
        let e = resolve_region(&tensor(&[4, 8], 0), &[0], &[1]).unwrap_err();
        assert!(e.contains("rank 2"), "{e}");
    }

    #[test]
    fn element_offsets_agree_with_one_element_regions() {
        for shape in [vec![5], vec![3, 4], vec![2, 3, 4]] {
            let t = tensor(&shape, 96);
            let n: usize = shape.iter().product();
            for i in 0..n {
                let mut rest = i;
                let mut off = vec![0; shape.len()];
                for d in (0..shape.len()).rev() {
                    (off[d], rest) = (rest % shape[d], rest / shape[d]);
                }
                let ones = vec![1; shape.len()];
                assert_eq!(element_offset(&t, &off).unwrap(), resolve_region(&t, &off, &ones).unwrap().runs[0].0);
            }
        }
        let t = tensor(&[3, 4], 0);
        assert!(element_offset(&t, &[3, 0]).unwrap_err().contains("fall outside"));
        assert!(element_offset(&t, &[0]).unwrap_err().contains("rank 2"));
    }

    #[test]
    fn element_offsets() {
        assert_eq!(element_offset(&tensor(&[4, 2], 32), &[3, 1]).unwrap(), 32 + 7 * 4);
    }

    /// Every region of small dense 1-, 2- and 3-d tensors: the single-run shortcut gives the
    /// runs, rows and columns the row walk gives.
    #[test]
    fn the_contiguous_shortcut_agrees_with_the_row_walk() {
        let walk = |t: &Tensor, off: &[usize], ext: &[usize]| {
            let starts = row_starts(t, off, ext).unwrap();
            let cols = ext[ext.len() - 1];
            Region { runs: merge_runs(starts.iter().map(|&s| (s, cols * 4))).into(), rows: starts.len(), cols }
        };
        let mut checked = 0;
        for shape in [vec![5], vec![3, 4], vec![2, 3, 4], vec![1, 4], vec![3, 1, 2]] {
            let t = tensor(&shape, 64);
            let n = shape.len();
            let total: usize = shape.iter().map(|&d| d * d).product();
            let mut idx = vec![0usize; 2 * n];
            for _ in 0..total {
                let (off, ext): (Vec<usize>, Vec<usize>) = (0..n).map(|d| (idx[2 * d], idx[2 * d + 1] + 1)).unzip();
                if off.iter().zip(&ext).zip(&shape).all(|((o, e), s)| o + e <= *s) {
                    assert_eq!(
                        resolve_region(&t, &off, &ext).unwrap(),
                        walk(&t, &off, &ext),
                        "{shape:?} {off:?} {ext:?}"
                    );
                    checked += 1;
                }
                for d in (0..2 * n).rev() {
                    idx[d] += 1;
                    if idx[d] < shape[d / 2] {
                        break;
                    }
                    idx[d] = 0;
                }
            }
        }
        assert!(checked > 100, "{checked}");
    }
}
