//! The `ranksim` command line.

fn main() {
    println!("ranksim");
}
