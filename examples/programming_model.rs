//! The `programming_model` tutorial program: `cargo run --example programming_model [RANKS]`.

fn main() -> std::process::ExitCode {
    ranksim_cli::example_main("programming_model")
}
