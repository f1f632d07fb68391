//! The `deadlock` tutorial program: `cargo run --example deadlock [RANKS]`.

fn main() -> std::process::ExitCode {
    ranksim::programs::example_main("deadlock")
}
