//! The package of ranksim's example binaries (`cargo run --example NAME`). It holds no code:
//! it exists so that building an example compiles ranksim and its runtime dependencies only,
//! not the root package's test and bench dependencies. The examples are the `.rs` files next
//! to this one; the tutorial programs they run live in `ranksim::programs`.
