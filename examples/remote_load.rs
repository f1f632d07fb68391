//! The `remote_load` tutorial program: `cargo run --example remote_load [RANKS]`.

fn main() -> std::process::ExitCode {
    ranksim_cli::example_main("remote_load")
}
