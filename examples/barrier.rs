//! The `barrier` tutorial program: `cargo run --example barrier [RANKS]`.

fn main() -> std::process::ExitCode {
    ranksim_cli::example_main("barrier")
}
