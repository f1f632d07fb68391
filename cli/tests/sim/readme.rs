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
    let readme = include_str!("../../../README.md");
    let after = &readme[readme.find("## Writing a program").expect("a Writing a program section")..];
    let block: Vec<&str> = after.lines().skip_while(|l| *l != "```rust").skip(1).take_while(|l| *l != "```").collect();
    assert_eq!(block, snippet, "README.md's snippet differs from tests/sim/readme.rs");
}

/// The shell commands of README.md's ```sh blocks, continuation lines joined, each with the
/// comment that follows it (`# ... exits 1` says the command must exit 1, `exits 2` 2).
fn readme_commands() -> Vec<(Vec<String>, String)> {
    let readme = include_str!("../../../README.md");
    let mut cmds = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    for line in readme.lines() {
        if line == "```sh" {
            in_sh = true;
            continue;
        }
        if in_sh && line == "```" {
            in_sh = false;
            continue;
        }
        if !in_sh || line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        pending.push_str(line.trim_end_matches('\\').trim_end());
        pending.push(' ');
        if line.ends_with('\\') {
            continue;
        }
        let (cmd, comment) = match pending.find(" # ") {
            Some(i) => (pending[..i].to_string(), pending[i + 3..].trim().to_string()),
            None => (pending.clone(), String::new()),
        };
        cmds.push((cmd.split_whitespace().map(str::to_string).collect(), comment));
        pending.clear();
    }
    cmds
}

/// A README command, cut so a debug test run stays short: a sweep runs one size (its `-b`) or
/// 1K..16K, a bench a 16 KiB message for 2 + 1 rounds, a check one seed. Later options win.
fn cut(args: &[String]) -> Vec<String> {
    let mut v = args.to_vec();
    let get = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned();
    match args.first().map(String::as_str) {
        Some("sweep") => match get("-b") {
            Some(b) => v.extend(["-e".into(), b]),
            None => v.extend(["-e".into(), "16K".into()]),
        },
        Some("bench") => v.extend(["-b", "16K", "-n", "2", "-w", "1"].map(String::from)),
        Some("check") if get("--seeds").is_some() => v.extend(["--seeds", "1"].map(String::from)),
        _ => {}
    }
    v
}

#[test]
fn every_readme_command_works() {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let dir = crate::common::scratch_dir("readme");
    let cmds = readme_commands();
    assert!(cmds.len() >= 20, "{cmds:?}");
    let examples = crate::examples::example_dir();
    let mut ran = 0;
    for (cmd, comment) in &cmds {
        let want = if comment.contains("exits 1") {
            1
        } else if comment.contains("exits 2") {
            2
        } else {
            0
        };
        let words: Vec<&str> = cmd.iter().map(String::as_str).collect();
        let (exe, args): (std::path::PathBuf, Vec<String>) = match words.as_slice() {
            ["cargo", "test", "--workspace"] => continue,
            // A longer run of a test module CI runs short: the variable must be read by it.
            [var, "cargo", "test", "--test", "sim", module] if var.contains('=') => {
                let name = var.split('=').next().unwrap_or_default();
                let src = std::fs::read_to_string(root.join("cli/tests/sim").join(format!("{module}.rs"))).unwrap();
                assert!(src.contains(name), "{cmd:?}: cli/tests/sim/{module}.rs does not read {name}");
                continue;
            }
            ["cargo", "bench", "--bench", name] => {
                // Criterion runs for minutes: the bench must exist and be declared.
                assert!(root.join("benches").join(format!("{name}.rs")).exists(), "{cmd:?}");
                let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
                assert!(manifest.contains(&format!("name = \"{name}\"")), "{cmd:?}");
                continue;
            }
            ["cargo", "run", "--release", "--", rest @ ..] => {
                let args: Vec<String> = rest.iter().map(|a| a.to_string()).collect();
                (env!("CARGO_BIN_EXE_ranksim").into(), cut(&args))
            }
            ["cargo", "run", "--release", "--example", name, "--", rest @ ..] => {
                (examples.join(name), rest.iter().map(|a| a.to_string()).collect())
            }
            ["cargo", "run", "--release", "--example", name] => (examples.join(name), Vec::new()),
            // A debug build of the simulator is slow to build and to run: a reader waits.
            ["cargo", "run", ..] => panic!("README `{}` builds in debug: add --release", cmd.join(" ")),
            _ => panic!("README command this test does not know how to run: {cmd:?}"),
        };
        // Files of the repository by their path in it; outputs land in a scratch directory.
        let args: Vec<String> = args
            .into_iter()
            .map(|a| if root.join(&a).is_file() { root.join(&a).to_string_lossy().into_owned() } else { a })
            .collect();
        let out = std::process::Command::new(&exe)
            .args(&args)
            .current_dir(&dir)
            .output()
            .unwrap_or_else(|e| panic!("{cmd:?}: {} ({e})", exe.display()));
        let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(want), "README `{}` (run as {args:?}):\n{text}", cmd.join(" "));
        assert!(!text.trim().is_empty(), "{cmd:?} printed nothing");
        ran += 1;
    }
    assert!(ran >= 15, "{ran} commands run");
    // The outputs the README promises were written.
    for f in ["busbw.svg", "results.json", "sweep.strace", "trace.json", "findings.json", "validate.json"] {
        assert!(dir.join(f).is_file(), "{f} not written");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_main_job_shows_the_builtin_next_to_the_hccl_class_modes_and_the_bound() {
    let cfg = ranksim::Config::default_preset();
    let mut a = ranksim_cli::commands::sweep::SweepArgs::new(None);
    a.min_bytes = 1 << 20;
    a.max_bytes = 1 << 20;
    let mut out = Vec::new();
    let status = ranksim_cli::commands::sweep::sweep(&mut out, &a).unwrap();
    assert_eq!(status, ranksim_cli::commands::Status::Ok);
    let text = String::from_utf8(out).unwrap();
    let default = ranksim_cli::commands::sweep::SweepArgs::new(None);
    let labels: Vec<String> = ranksim_cli::commands::sweep::combos(&default, &cfg, 8)
        .iter()
        .map(|c| format!("{} {} {} -w {} {:?} {}", c.kind, c.mode, c.core_num, c.warmup, c.max_bytes, c.auto))
        .collect();
    // PyPTO's builtin, and one series of what HCCL runs at each size (its AIV mode's picks).
    assert_eq!(labels, ["allreduce mesh 1 -w 0 Some(4194304) false", "allreduce aiv-mesh 48 -w 0 None true"]);
    // a2a3: 7 HCCS links of 28 GB/s at efficiency 0.7 out of each rank, port 196 x 0.7.
    assert_eq!(text.matches("# bound: busbw <= 137.20 GB/s: rank 0 sends over 7 link(s) x 19.60 GB/s").count(), 2);
    assert!(text.contains("# allreduce mesh core_num 1: PyPTO's builtin mesh allreduce as written"), "{text}");
    assert!(text.contains("# allreduce hccl core_num 48: HCCL-class, not a PyPTO builtin"), "{text}");
    assert!(text.contains("collective allreduce mode hccl path host core_num 48 dtype float"), "{text}");
    // The 1 MiB rows, each HCCL row naming what ran, then the summary against the bound (times
    // as the golden sweep has them).
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("     1048576")).collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(rows[0].contains("4574.51    0.23    0.40       0"), "{text}");
    assert!(
        rows[1].ends_with("59.23   17.70   30.98       0  aiv-mesh (AllReduceMeshAivSmallCountExecutor)"),
        "{text}"
    );
    assert!(text.contains("# summary: peak busbw per series (bound 137.20 GB/s)"), "{text}");
    let last = text.lines().last().unwrap_or_default();
    assert!(last.starts_with("#   allreduce hccl core_num 48 "), "{text}");
    assert!(last.ends_with(" 30.98 GB/s = 22.6% of the bound"), "{text}");
}

#[test]
fn the_default_run_stops_the_builtin_early_and_says_so() {
    let mut a = ranksim_cli::commands::sweep::SweepArgs::new(None);
    (a.min_bytes, a.max_bytes, a.builtin_max_bytes) = (1 << 10, 4 << 10, Some(2 << 10));
    let mut out = Vec::new();
    ranksim_cli::commands::sweep::sweep(&mut out, &a).unwrap();
    let text = String::from_utf8(out).unwrap();
    let series: Vec<&str> = text.split("# ranksim ").skip(1).collect();
    assert_eq!(series.len(), 2, "{text}");
    let rows = |s: &str| s.lines().filter(|l| l.contains("float     sum")).count();
    assert_eq!([rows(series[0]), rows(series[1])], [2, 3], "{text}");
    assert!(series[0].contains("maxBytes 2048 "), "{text}");
    assert!(series[1].contains("maxBytes 4096 "), "{text}");
    assert!(series[0].contains("# allreduce mesh core_num 1: up to 2K in the default run"), "{text}");
    // -e given (builtin_max_bytes None): every series to -e.
    a.builtin_max_bytes = None;
    let mut out = Vec::new();
    ranksim_cli::commands::sweep::sweep(&mut out, &a).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text.lines().filter(|l| l.contains("float     sum")).count(), 6, "{text}");
    assert!(!text.contains("in the default run"), "{text}");
}

#[test]
fn the_bound_follows_the_topology() {
    let bound = |name: &str, ranks: usize| {
        ranksim::measure::busbw_bound(&ranksim::Config::preset(name).unwrap(), ranks, None).unwrap()
    };
    let a2a3 = bound("a2a3", 8);
    assert_eq!(a2a3.links, vec![(7, 19.6)]);
    assert!((a2a3.gbps - 137.2).abs() < 1e-9, "{a2a3:?}");
    // Two ranks of a full mesh: one link.
    assert!((bound("a2a3", 2).gbps - 19.6).abs() < 1e-9);
    // A bidirectional ring: two neighbours' links, whatever the rank count.
    let ring = bound("ring8", 8);
    assert_eq!(ring.links, vec![(2, 19.6)]);
    // Two nodes: 7 HCCS links and the RoCE NIC, under the port.
    let two = bound("two-node", 16);
    assert_eq!(two.links.iter().map(|l| l.0).sum::<usize>(), 8, "{two:?}");
    assert!(two.gbps <= two.port_gbps && two.gbps <= two.egress_gbps, "{two:?}");
    assert!(a2a3.cut.is_none() && bound("two-node", 8).cut.is_none(), "one server: no NIC to cross");
}

/// On several servers the bound knows the NICs between them (issue 24): it used to be rank
/// 0's links summed (7 HCCS + 1 NIC = 154.7 GB/s) for every collective, which an all_to_all
/// cannot approach: half of each rank's data crosses the servers' 8 NICs.
#[test]
fn the_bound_of_several_servers_is_the_cut_the_nics_make() {
    use ranksim::collectives::Kind;
    let cfg = ranksim::Config::preset("two-node").unwrap();
    let bound = |kind| ranksim::measure::busbw_bound(&cfg, 16, Some(kind)).unwrap();
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
    let a2a = bound(Kind::AllToAll);
    let cut = a2a.cut.clone().expect("two servers");
    // 8 NICs of 25 GB/s x 0.955 (the RoCE level's efficiency, fitted to HIXL) leave server 0.
    assert_eq!((cut.level, cut.inside), (1, 8));
    assert!(close(cut.gbps, 191.0), "{cut:?}");
    // 8 x 8 pairs x S/16 each cross the cut: busbw (15/16) S / t <= 15 x 191 / 64.
    assert!(close(a2a.gbps, 15.0 * 191.0 / 64.0), "{a2a:?}");
    assert!(a2a.line().contains("which allows all_to_all busbw <= 44.77 GB/s"), "{}", a2a.line());
    // An allreduce needs one copy of the result across: the links, not the cut, bound it;
    // of rank 0's links (7 HCCS + 1 NIC = 154.7 GB/s) its port takes 196 x 0.7 = 137.2 GB/s.
    let ar = bound(Kind::AllReduce);
    assert!(close(ar.gbps, 137.2) && close(ar.cut.unwrap().busbw_gbps, 2.0 * 15.0 / 16.0 * 191.0));
    // A broadcast from rank 0 sends S across: the cut's 191 GB/s, above rank 0's port.
    let bc = bound(Kind::Broadcast);
    assert!(close(bc.gbps, 137.2) && bc.cut.as_ref().is_some_and(|c| close(c.busbw_gbps, 191.0)), "{bc:?}");
    // The default sweep of several servers runs the vendor library's algorithms between
    // servers (rhd for an allreduce, the two-level hier for the others), not the
    // single-server full-mesh ones.
    let a = ranksim_cli::commands::sweep::SweepArgs::new(Some("two-node".into()));
    let modes: Vec<String> =
        ranksim_cli::commands::sweep::combos(&a, &cfg, 16).iter().map(|c| format!("{} {}", c.kind, c.mode)).collect();
    assert_eq!(modes, ["allreduce mesh", "allreduce rhd"]);
}

/// The README's calibrate examples say what they show (issue 24): the device-timed table fits,
/// the host-timed one does not and the output says so.
#[test]
fn the_readme_calibrate_examples_fit_or_say_why_not() {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let run = |args: &[&str]| {
        let out =
            std::process::Command::new(env!("CARGO_BIN_EXE_ranksim")).args(args).current_dir(root).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let rms = |text: &str| -> f64 {
        let l = text.lines().find(|l| l.starts_with("rms relative error: ")).expect(text);
        l.trim_start_matches("rms relative error: ").trim_end_matches('%').parse().unwrap()
    };
    let device = run(&["calibrate", "--table", "configs/measurements/t3-tget.csv"]);
    assert!(rms(&device) < 2.0 && !device.contains("WARNING"), "{device}");
    assert!(device.contains("fitted: latency 109.7 ns, raw rate 28.077 GB/s"), "{device}");
    let host = run(&["calibrate", "--table", "examples/data/tget_910b.csv", "--workload", "get"]);
    assert!(
        (rms(&host) - 33.51).abs() < 0.01 && host.contains("WARNING: rms relative error 33.51% is above 10%"),
        "{host}"
    );
    let readme = include_str!("../../../README.md");
    assert!(readme.contains("1.6 % rms") && readme.contains("33.5 % rms and a WARNING"));
}
