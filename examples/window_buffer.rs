//! The `window_buffer` tutorial program: `cargo run --example window_buffer [RANKS]`.

fn main() -> std::process::ExitCode {
    ranksim_cli::example_main("window_buffer")
}
