//! The `put` tutorial program: `cargo run --example put [RANKS]`.

fn main() -> std::process::ExitCode {
    ranksim::programs::example_main("put")
}
