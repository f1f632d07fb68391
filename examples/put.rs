//! The `put` tutorial program: `cargo run --example put [RANKS]`.

fn main() -> std::process::ExitCode {
    ranksim_cli::example_main("put")
}
