//! The kernel API's tile operations, declared once: [`for_each_tile_op!`](crate::for_each_tile_op)
//! hands the list to a callback macro, which writes what follows from it. In sim-core the list
//! writes `Ops`' one-line methods (an entry with `= body`) and every entry's [`Core`] forward
//! (`blocking/tile_ops.rs`); in the Python bindings it writes the `Core` methods of the entries
//! marked `py` and the op table `ranksim.pypto`'s `pl` functions are made from.
//!
//! [`Core`]: crate::Core

/// Hands the kernel API's tile operations to the macro `$then`, one entry each:
///
/// ```text
/// /// doc
/// py name(arg: Kind, ...) -> Ret = ops_method(args...);
/// ```
///
/// `py` (bound in Python as declared) or `rust` (Python has its own wrapper, or none); each
/// `Kind` is a type name (`Tile` and `CubeTile` are borrowed, the rest passed by value); `Ret`
/// is `Tile` or `CubeTile` (the operation returns `SimResult<Ret>`); `= ops_method(args...)`,
/// where present, is the body of `Ops`' method (a call of another `Ops` method), else `Ops`
/// writes the method by hand. Every entry is local work on the core's vector or cube unit: no
/// request to the scheduler, so `Core`'s form is a plain forward. A new tile operation is one
/// entry here (and its element math): `Ops`, `Core`, Python's `Core` and `pl` follow.
#[macro_export]
macro_rules! for_each_tile_op {
    ($then:ident) => {
        $then! {
            // ---- two tiles, and `add` / `mul` / `max` / `min` with a scalar ------------------

            /// Element-wise `op(a, b)` on the vector unit.
            rust reduce(op: ReduceOp, a: Tile, b: Tile) -> Tile;
            /// `a + b` (TADD).
            py add(a: Tile, b: Tile) -> Tile = reduce(ReduceOp::Sum, a, b);
            /// `max(a, b)` element-wise (TMAX).
            py max(a: Tile, b: Tile) -> Tile = reduce(ReduceOp::Max, a, b);
            /// `min(a, b)` element-wise (TMIN).
            py min(a: Tile, b: Tile) -> Tile = reduce(ReduceOp::Min, a, b);
            /// `a * b` element-wise (TMUL).
            py mul(a: Tile, b: Tile) -> Tile = reduce(ReduceOp::Prod, a, b);
            /// `a + s` element-wise, with `s` converted to the tile's dtype (TADDS).
            py adds(a: Tile, s: f64) -> Tile;
            /// `a * s` element-wise, with `s` converted to the tile's dtype (TMULS).
            py muls(a: Tile, s: f64) -> Tile;
            /// `op(a, b)` element-wise over two tiles of one dtype and shape; see
            /// [`Ops::binary`](crate::Ops::binary).
            rust binary(op: BinaryOp, a: Tile, b: Tile) -> Tile;
            /// `a - b` element-wise (TSUB).
            py sub(a: Tile, b: Tile) -> Tile = binary(BinaryOp::Sub, a, b);
            /// `a / b` element-wise (TDIV); float tiles.
            py div(a: Tile, b: Tile) -> Tile = binary(BinaryOp::Div, a, b);
            /// `op(a, s)` element-wise, `s` converted to the tile's dtype first; see
            /// [`Ops::binary_scalar`](crate::Ops::binary_scalar).
            rust binary_scalar(op: BinaryOp, a: Tile, s: f64) -> Tile;
            /// `a - s` (TSUBS).
            py subs(a: Tile, s: f64) -> Tile = binary_scalar(BinaryOp::Sub, a, s);
            /// `a / s` (TDIVS); an integer tile truncates toward zero.
            py divs(a: Tile, s: f64) -> Tile = binary_scalar(BinaryOp::Div, a, s);
            /// `max(a, s)` (TMAXS).
            py maxs(a: Tile, s: f64) -> Tile = binary_scalar(BinaryOp::Max, a, s);
            /// `min(a, s)` (TMINS).
            py mins(a: Tile, s: f64) -> Tile = binary_scalar(BinaryOp::Min, a, s);
            /// `a mod b` element-wise with the sign of `b` (TREM): numpy's `remainder`, Python's
            /// `%`; float or integer tiles (an integer divisor of 0 is refused). Costs what
            /// `div` costs (`VecOp::Div`).
            py rem(a: Tile, b: Tile) -> Tile = binary(BinaryOp::Rem, a, b);
            /// `a mod s` with the sign of `s` (TREMS); costs what `divs` costs.
            py rems(a: Tile, s: f64) -> Tile = binary_scalar(BinaryOp::Rem, a, s);

            // ---- one tile --------------------------------------------------------------------

            /// `op` of every valid element; see [`Ops::unary`](crate::Ops::unary).
            rust unary(op: UnaryOp, a: Tile) -> Tile;
            /// `e^a` element-wise (TEXP); float tiles.
            py exp(a: Tile) -> Tile = unary(UnaryOp::Exp, a);
            /// Natural logarithm element-wise (TLOG); float tiles.
            py log(a: Tile) -> Tile = unary(UnaryOp::Log, a);
            /// Square root element-wise (TSQRT); float tiles.
            py sqrt(a: Tile) -> Tile = unary(UnaryOp::Sqrt, a);
            /// `1 / sqrt(a)` element-wise (TRSQRT); float tiles.
            py rsqrt(a: Tile) -> Tile = unary(UnaryOp::Rsqrt, a);
            /// `1 / a` element-wise (TRECIP); float tiles.
            py recip(a: Tile) -> Tile = unary(UnaryOp::Recip, a);
            /// `|a|` element-wise (TABS).
            py abs(a: Tile) -> Tile = unary(UnaryOp::Abs, a);
            /// `-a` element-wise (TNEG, which is TMULS by -1 and costs what `muls` costs).
            py neg(a: Tile) -> Tile = unary(UnaryOp::Neg, a);
            /// `max(a, 0)` element-wise (TRELU).
            py relu(a: Tile) -> Tile = unary(UnaryOp::Relu, a);
            /// `a` converted to `to` with rounding `mode` (TCVT); see [`Ops::cast`](crate::Ops::cast).
            rust cast(a: Tile, to: DType, mode: RoundMode) -> Tile;
            /// The same tile viewed as `rows x cols` (`pl.reshape`): no data moves, so it is free.
            rust reshape(a: Tile, rows: usize, cols: usize) -> Tile;

            // ---- along rows and columns ------------------------------------------------------

            /// `op` along each row or down each column; see [`Ops::reduce_axis`](crate::Ops::reduce_axis).
            rust reduce_axis(op: ReduceOp, axis: Axis, a: Tile) -> Tile;
            /// Sum of each row: a `rows x 1` tile (`pl.row_sum`).
            py row_sum(a: Tile) -> Tile = reduce_axis(ReduceOp::Sum, Axis::Rows, a);
            /// Maximum of each row (`pl.row_max`).
            py row_max(a: Tile) -> Tile = reduce_axis(ReduceOp::Max, Axis::Rows, a);
            /// Minimum of each row (`pl.row_min`).
            py row_min(a: Tile) -> Tile = reduce_axis(ReduceOp::Min, Axis::Rows, a);
            /// Sum of each column: a `1 x cols` tile (`pl.col_sum`).
            py col_sum(a: Tile) -> Tile = reduce_axis(ReduceOp::Sum, Axis::Cols, a);
            /// Maximum of each column (`pl.col_max`).
            py col_max(a: Tile) -> Tile = reduce_axis(ReduceOp::Max, Axis::Cols, a);
            /// Minimum of each column (`pl.col_min`).
            py col_min(a: Tile) -> Tile = reduce_axis(ReduceOp::Min, Axis::Cols, a);
            /// `target`'s shape with each row `r` filled with `col[r, 0]` (TROWEXPAND).
            py row_expand(target: Tile, col: Tile) -> Tile;
            /// `target`'s shape with each column `c` filled with `row[0, c]` (TCOLEXPAND).
            py col_expand(target: Tile, row: Tile) -> Tile;

            // ---- masks and fills -------------------------------------------------------------

            /// `1` where `a op b` holds and `0` elsewhere (TCMP); see [`Ops::cmp`](crate::Ops::cmp).
            rust cmp(a: Tile, b: Tile, op: CmpOp) -> Tile;
            /// `1` where `a op s` holds and `0` elsewhere (TCMPS).
            rust cmps(a: Tile, s: f64, op: CmpOp) -> Tile;
            /// `a` where `mask` is not zero, else `b` (TSEL); see [`Ops::select`](crate::Ops::select).
            rust select(mask: Tile, a: Tile, b: Tile) -> Tile;
            /// `a` where `mask` is not zero, else `s` (TSELS).
            rust selects(mask: Tile, a: Tile, s: f64) -> Tile;
            /// A `rows x cols` tile of `dtype` filled with `value` (TEXPANDS, `pl.full`).
            rust full(dtype: DType, rows: usize, cols: usize, value: f64) -> Tile;
            /// A tile of `target`'s dtype and shapes filled with `value` (`pl.expands`).
            py expands(target: Tile, value: f64) -> Tile;

            // ---- the cube (AIC cores) --------------------------------------------------------

            /// Moves an L1 tile into L0A, the left operand (TMOV / TEXTRACT); see
            /// [`Ops::to_l0a`](crate::Ops::to_l0a).
            py to_l0a(l1: CubeTile) -> CubeTile;
            /// Moves an L1 tile into L0B, the right operand; see [`Ops::to_l0b`](crate::Ops::to_l0b).
            py to_l0b(l1: CubeTile) -> CubeTile;
            /// `a @ b` into a new L0C accumulator (TMATMUL): `a` in L0A, `b` in L0B.
            py matmul(a: CubeTile, b: CubeTile) -> CubeTile;
            /// `acc + a @ b` (TMATMUL_ACC): `acc` in L0C.
            py matmul_acc(acc: CubeTile, a: CubeTile, b: CubeTile) -> CubeTile;
        }
    };
}
pub(crate) use for_each_tile_op;

/// The Rust type of a tile operation's argument of kind `$kind` (tiles borrowed).
macro_rules! tile_op_arg {
    (Tile) => {
        &Tile
    };
    (CubeTile) => {
        &CubeTile
    };
    ($kind:ident) => {
        $kind
    };
}
pub(crate) use tile_op_arg;

/// `Ops`' method of each entry with a body: the call of another `Ops` method it is.
macro_rules! ops_methods {
    ($($(#[$doc:meta])* $bind:ident $name:ident($($arg:ident: $kind:ident),*) -> $ret:ident $(= $via:ident($($body:tt)*))?;)*) => {
        $( $crate::api::kernel::op_list::ops_method! { $(#[$doc])* $name($($arg: $kind),*) -> $ret $(= $via($($body)*))? } )*
    };
}
pub(crate) use ops_methods;

/// One entry of [`ops_methods`]: a method when the entry has a body, else nothing (`Ops`
/// writes it by hand).
macro_rules! ops_method {
    ($(#[$doc:meta])* $name:ident($($arg:ident: $kind:ident),*) -> $ret:ident = $via:ident($($body:tt)*)) => {
        $(#[$doc])*
        pub fn $name(&mut self, $($arg: $crate::api::kernel::op_list::tile_op_arg!($kind)),*) -> SimResult<$ret> {
            self.$via($($body)*)
        }
    };
    ($(#[$doc:meta])* $name:ident($($arg:ident: $kind:ident),*) -> $ret:ident) => {};
}
pub(crate) use ops_method;

/// `Core`'s forward of every entry: the same call on its `Ops`.
macro_rules! core_forwards {
    ($($(#[$doc:meta])* $bind:ident $name:ident($($arg:ident: $kind:ident),*) -> $ret:ident $(= $via:ident($($body:tt)*))?;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(&mut self, $($arg: $crate::api::kernel::op_list::tile_op_arg!($kind)),*) -> SimResult<$ret> {
                self.ops().$name($($arg),*)
            }
        )*
    };
}
pub(crate) use core_forwards;
