//! The `deadlock` tutorial program: `cargo run --example deadlock [RANKS]`.

fn main() -> std::process::ExitCode {
    ranksim_cli::example_main("deadlock")
}
