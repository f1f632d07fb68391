//! The `get` tutorial program: `cargo run --example get [RANKS]`.

fn main() -> std::process::ExitCode {
    ranksim_cli::example_main("get")
}
