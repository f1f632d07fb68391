//! The `remote_store` tutorial program: `cargo run --example remote_store [RANKS]`.

fn main() -> std::process::ExitCode {
    ranksim_cli::example_main("remote_store")
}
