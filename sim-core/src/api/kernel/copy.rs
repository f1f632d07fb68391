//! put / get arguments and their geometry: the transfer is viewed as `[rows, cols]` (leading
//! dims flattened) and cut into `chunk_rows x chunk_cols` staging tiles, row blocks outer and
//! column blocks inner, as pto-isa's TPUT/TGET slide over a transfer.

use crate::base::addr::{MemKey, Place};
use crate::base::dtype::DType;
use crate::base::signal::AtomicType;
use crate::base::tensor::{Region, Tensor, merge_runs, row_starts};

/// Options of `put` and `get` (PyPTO's keyword arguments).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CopyOpts {
    region: Option<(Vec<usize>, Vec<usize>, Vec<usize>)>,
    pub(crate) atomic: AtomicType,
    chunk_rows: usize,
    chunk_cols: usize,
    pub(crate) pipeline: bool,
}

impl CopyOpts {
    /// Copy the whole tensor (shapes must match), unchunked, overwriting.
    pub fn new() -> CopyOpts {
        CopyOpts::default()
    }

    /// Copy the sub-region `shape` from `src_offsets` in the source to `dst_offsets` in the
    /// destination (PyPTO requires all three together).
    pub fn region(mut self, dst_offsets: &[usize], src_offsets: &[usize], shape: &[usize]) -> CopyOpts {
        self.region = Some((dst_offsets.to_vec(), src_offsets.to_vec(), shape.to_vec()));
        self
    }

    /// Stage through UB in `rows x cols` tiles (0 = the full extent of that dimension).
    pub fn chunks(mut self, rows: usize, cols: usize) -> CopyOpts {
        self.chunk_rows = rows;
        self.chunk_cols = cols;
        self
    }

    /// Overlap the load of chunk i+1 with the store of chunk i (needs both chunk sizes > 0).
    pub fn pipeline(mut self, on: bool) -> CopyOpts {
        self.pipeline = on;
        self
    }

    /// Overwrite (`None`) or accumulate (`Add`) at the destination (put only).
    pub fn atomic(mut self, atomic: AtomicType) -> CopyOpts {
        self.atomic = atomic;
        self
    }
}

/// Checks that `tiles` staging tiles of `rows x cols` `dtype` fit in `ub` bytes.
pub(crate) fn ub_check(dtype: DType, rows: usize, cols: usize, tiles: usize, ub: usize) -> Result<(), String> {
    let need = rows * cols * dtype.size() * tiles;
    if need <= ub {
        return Ok(());
    }
    let what = if tiles > 1 {
        format!("{tiles} staging tiles of {rows}x{cols} {dtype} need")
    } else {
        format!("a {rows}x{cols} {dtype} tile needs")
    };
    Err(format!("{what} {need} bytes but UB holds {ub} bytes per core; use a smaller tile or chunk the transfer"))
}

/// A tensor and the memory it resolved to.
pub(crate) type Located<'a> = (&'a Tensor, MemKey);

/// Validates a put/get and cuts it into `(source, destination)` places per chunk.
pub(crate) fn chunk_places(
    op: &str,
    dst: Located<'_>,
    src: Located<'_>,
    o: &CopyOpts,
    ub: usize,
) -> Result<Vec<(Place, Place)>, String> {
    let (dt, st) = (dst.0, src.0);
    if dt.dtype() != st.dtype() {
        return Err(format!(
            "dst `{}` is {} but src `{}` is {}; both need the same dtype",
            dt.name(),
            dt.dtype(),
            st.name(),
            st.dtype()
        ));
    }
    let (doff, soff, shape) = match &o.region {
        Some((d, s, sh)) => (d.clone(), s.clone(), sh.clone()),
        None if dt.shape() != st.shape() => {
            return Err(format!(
                "full-tensor {op} needs equal shapes, got dst `{}` {:?} and src `{}` {:?}; pass a region (offsets and shape) instead",
                dt.name(),
                dt.shape(),
                st.name(),
                st.shape()
            ));
        }
        None => (vec![0; dt.shape().len()], vec![0; st.shape().len()], dt.shape().to_vec()),
    };
    if o.pipeline && (o.chunk_rows == 0 || o.chunk_cols == 0) {
        return Err(format!(
            "pipeline=true requires both chunk_rows>0 and chunk_cols>0 (got chunk_rows={}, chunk_cols={})",
            o.chunk_rows, o.chunk_cols
        ));
    }
    let d_rows = row_starts(dt, &doff, &shape)?;
    let s_rows = row_starts(st, &soff, &shape)?;
    let (rows, cols) = (d_rows.len(), shape[shape.len() - 1]);
    let cr = if o.chunk_rows == 0 { rows } else { o.chunk_rows.min(rows) };
    let cc = if o.chunk_cols == 0 { cols } else { o.chunk_cols.min(cols) };
    ub_check(dt.dtype(), cr, cc, if o.pipeline { 2 } else { 1 }, ub)?;
    let es = dt.dtype().size();
    let place = |mem: MemKey, t: &Tensor, starts: &[usize], r0: usize, nr: usize, c0: usize, nc: usize| Place {
        mem,
        region: Region {
            runs: merge_runs(starts[r0..r0 + nr].iter().map(|&s| (s + c0 * es, nc * es))).into(),
            rows: nr,
            cols: nc,
        },
        tensor: t.clone(),
    };
    let mut chunks = Vec::new();
    for r0 in (0..rows).step_by(cr) {
        let nr = cr.min(rows - r0);
        for c0 in (0..cols).step_by(cc) {
            let nc = cc.min(cols - c0);
            chunks.push((place(src.1, st, &s_rows, r0, nr, c0, nc), place(dst.1, dt, &d_rows, r0, nr, c0, nc)));
        }
    }
    Ok(chunks)
}
