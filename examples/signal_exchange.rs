//! The `signal_exchange` tutorial program: `cargo run --example signal_exchange [RANKS]`.

fn main() -> std::process::ExitCode {
    ranksim_cli::example_main("signal_exchange")
}
