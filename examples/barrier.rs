//! The `barrier` tutorial program: `cargo run --example barrier [RANKS]`.

fn main() -> std::process::ExitCode {
    ranksim::programs::example_main("barrier")
}
