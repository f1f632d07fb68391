//! The `get` tutorial program: `cargo run --example get [RANKS]`.

fn main() -> std::process::ExitCode {
    ranksim::programs::example_main("get")
}
