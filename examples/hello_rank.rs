//! The `hello_rank` tutorial program: `cargo run --example hello_rank [RANKS]`.

fn main() -> std::process::ExitCode {
    ranksim_cli::example_main("hello_rank")
}
