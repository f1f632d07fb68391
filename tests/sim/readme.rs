//! The README's "Writing a program" snippet compiles, runs, and is the text below.

fn readme_program() -> Result<(), Box<dyn std::error::Error>> {
    // README:begin
    use ranksim::prelude::*;

    let mut world = ranksim::Config::default_preset().world()?;
    let ranks: Vec<usize> = (0..world.size()).collect();
    // A comm domain whose windows may hold at most 4 KiB per rank (simpler's allocate_domain).
    let dom = world.allocate_domain("comm_d0", &ranks, 4096, DomainOptions::default())?;
    let x = world.alloc_window(&dom, "x", DType::F32, &[1, 256])?;
    let y = world.alloc_window(&dom, "y", DType::F32, &[1, 256])?;
    let sig = world.alloc_window(&dom, "signal", DType::I32, &[8, 1])?;
    let out = world.alloc_tensor("out", DType::F32, &[1, 256])?;
    for r in 0..ranks.len() {
        world.write(&x, r, &[r as f32; 256])?;
    }
    let mut step = Dispatch::new("step");
    let (xk, yk, s) = (x.clone(), y.clone(), sig.clone());
    step.add(
        Task::new("shift", 1, move |core| {
            let (me, n) = (core.rank(), core.nranks());
            let t = core.load(&xk, &[0, 0], &[1, 256])?;
            core.remote_store(&t, &yk, (me + 1) % n, &[0, 0], AtomicType::None)?;
            core.notify(&s, (me + 1) % n, &[me, 0], 1, NotifyOp::AtomicAdd)?;
            core.wait(&s, &[(me + n - 1) % n, 0], 1, WaitCmp::Ge) // y has landed
        })
        .input(&x)
        .output_existing(&y),
    );
    let (yk, o) = (y.clone(), out.clone());
    step.add(
        // Declared tensors order the tasks: `plus_one` reads y, so it starts after `shift`.
        Task::new("plus_one", 1, move |core| {
            let t = core.load(&yk, &[0, 0], &[1, 256])?;
            let t = core.adds(&t, 1.0)?;
            core.store(&t, &o, &[0, 0])
        })
        .input(&y)
        .output(&out),
    );
    world.dispatch_all(&dom, step)?;
    let report = world.run()?; // Err(SimError::Deadlock(..)) if the protocol hangs
    let got: Vec<f32> = world.read(&out, 0)?;
    assert_eq!(got[0], ranks.len() as f32); // rank 0 got rank n-1's x, plus one
    world.release_domain(&dom)?; // windows freed; the name comm_d0 is free again
    // README:end
    assert!(report.end > SimTime::ZERO);
    Ok(())
}

#[test]
fn the_readme_program_runs() {
    readme_program().unwrap();
}

#[test]
fn the_readme_shows_this_program() {
    let me = include_str!("readme.rs");
    let body: Vec<&str> = me
        .lines()
        .skip_while(|l| !l.ends_with("// README:begin"))
        .skip(1)
        .take_while(|l| !l.ends_with("// README:end"))
        .collect();
    let snippet: Vec<&str> = body.iter().map(|l| l.strip_prefix("    ").unwrap_or(l)).collect();
    let readme = include_str!("../../README.md");
    let after = &readme[readme.find("## Writing a program").expect("a Writing a program section")..];
    let block: Vec<&str> = after.lines().skip_while(|l| *l != "```rust").skip(1).take_while(|l| *l != "```").collect();
    assert_eq!(block, snippet, "README.md's snippet differs from tests/sim/readme.rs");
}
