//! The fuzzing harness (issue 13): generated configs (valid and mutated), CLI argument vectors
//! and kernels with random arguments, each run under a hang guard, asserting that nothing
//! panics or hangs, that every error names the key or argument at fault, and that valid
//! inputs give a result.
//!
//! CI runs a short pass with a fixed `PROPTEST_RNG_SEED`; a longer one is
//! `RANKSIM_FUZZ_CASES=2000 cargo test --test sim fuzz` (cases per property). A failing case
//! proptest finds is kept in `tests/proptest-regressions/` and re-run first; the defects the
//! harness found are pinned below as named regression tests.

use crate::common::simple;
use proptest::prelude::*;
use ranksim::Config;
use ranksim::prelude::*;
use ranksim_cli::commands::Status;
use ranksim_cli::commands::sweep::{SweepArgs, sweep};
use std::panic::AssertUnwindSafe;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use toml::Value;

/// How long one generated input may take before it counts as a hang. Generous (debug builds,
/// a busy 2-core machine): it catches runs that never end, it does not time anything.
const HANG_GUARD: Duration = Duration::from_secs(120);

/// Cases per property: `RANKSIM_FUZZ_CASES` or the short CI default.
fn cases(default: u32) -> u32 {
    std::env::var("RANKSIM_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn config(default: u32) -> ProptestConfig {
    ProptestConfig { cases: cases(default), max_shrink_iters: 64, ..ProptestConfig::default() }
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

/// Runs `f` on its own thread: its value, or why not (a panic, or no answer within the guard).
fn guarded<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(AssertUnwindSafe(f));
        let _ = tx.send(r.map_err(|p| panic_text(&*p)));
    });
    match rx.recv_timeout(HANG_GUARD) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(msg)) => Err(format!("panicked: {msg}")),
        Err(_) => Err(format!("no answer within {HANG_GUARD:?}: a hang")),
    }
}

fn scratch() -> std::path::PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let d =
        std::env::temp_dir().join(format!("ranksim-fuzz-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
    std::fs::create_dir_all(&d).unwrap();
    d
}

// ---------------------------------------------------------------------------------------------
// Configs

/// One step of a key path: a table key or an array index.
#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    Idx(usize),
}

/// Every leaf (number, bool, string) of a TOML document, as its path.
fn leaves(v: &Value, path: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
    match v {
        Value::Table(t) => {
            for (k, v) in t {
                path.push(Seg::Key(k.clone()));
                leaves(v, path, out);
                path.pop();
            }
        }
        Value::Array(a) if a.iter().any(|x| x.is_table()) => {
            for (i, v) in a.iter().enumerate() {
                path.push(Seg::Idx(i));
                leaves(v, path, out);
                path.pop();
            }
        }
        _ => out.push(path.clone()),
    }
}

/// The table holding the leaf at `path`, and the leaf's key.
fn parent<'a>(root: &'a mut Value, path: &[Seg]) -> (&'a mut toml::Table, String) {
    let mut v = root;
    for s in &path[..path.len() - 1] {
        v = match s {
            Seg::Key(k) => v.get_mut(k.as_str()).unwrap(),
            Seg::Idx(i) => v.get_mut(*i).unwrap(),
        };
    }
    let Some(Seg::Key(k)) = path.last() else { unreachable!("leaves are table entries") };
    (v.as_table_mut().unwrap(), k.clone())
}

/// How one leaf is changed.
#[derive(Clone, Debug)]
enum Mutation {
    /// Scaled by a factor in [0.5, 2] (integers stay integers): usually still valid.
    Scale(f64),
    /// A fixed awkward value.
    Set(Value),
    /// The key removed.
    Remove,
    /// The key renamed to an unknown one.
    Rename,
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let fixed = prop_oneof![
        Just(Value::Float(0.0)),
        Just(Value::Integer(0)),
        Just(Value::Float(-1.0)),
        Just(Value::Integer(-1)),
        Just(Value::Float(1e-30)),
        Just(Value::Float(1e15)),
        Just(Value::Float(1e20)),
        Just(Value::Float(1e30)),
        Just(Value::Float(1e300)),
        Just(Value::Float(f64::NAN)),
        Just(Value::Float(f64::INFINITY)),
        Just(Value::Float(f64::NEG_INFINITY)),
        Just(Value::Integer(i64::MAX)),
        Just(Value::Integer(1 << 40)),
        Just(Value::Integer(1)),
        Just(Value::String("x".into())),
        Just(Value::Boolean(true)),
        Just(Value::Array(vec![Value::Integer(1)])),
    ];
    prop_oneof![
        4 => (0.5f64..2.0).prop_map(Mutation::Scale),
        6 => fixed.prop_map(Mutation::Set),
        1 => Just(Mutation::Remove),
        1 => Just(Mutation::Rename),
    ]
}

/// Applies `m` to the leaf at `path`; the key an error must name.
fn mutate(root: &mut Value, path: &[Seg], m: &Mutation) -> String {
    let (table, key) = parent(root, path);
    match m {
        Mutation::Scale(f) => {
            let v = table.get_mut(&key).unwrap();
            let new = match &*v {
                Value::Integer(i) => Value::Integer(((*i as f64) * f).round().max(0.0) as i64),
                Value::Float(x) => Value::Float(*x * f),
                other => other.clone(),
            };
            *v = new;
            key
        }
        Mutation::Set(x) => {
            table.insert(key.clone(), x.clone());
            key
        }
        Mutation::Remove => {
            table.remove(&key);
            key
        }
        Mutation::Rename => {
            let v = table.remove(&key).unwrap();
            let new = format!("{key}_typo");
            table.insert(new.clone(), v);
            new
        }
    }
}

/// The outcome of one generated config: accepted and swept, or refused.
#[allow(clippy::type_complexity)]
fn try_config(text: String, mode: usize) -> Result<Result<Result<(Status, String), String>, String>, String> {
    guarded(move || {
        let cfg = Config::from_toml(&text, "fuzz").map_err(|e| e.to_string())?;
        let d = scratch();
        let path = d.join("m.toml");
        std::fs::write(&path, &text).unwrap();
        let a = SweepArgs {
            // The builtin, the direct and the SDMA allreduce: between them every [chip] and
            // [fabric] key is on some path.
            modes: Some(vec![
                [collectives::Mode::Mesh, collectives::Mode::TwoShot, collectives::Mode::SdmaMesh][mode % 3],
            ]),
            min_bytes: 1024,
            max_bytes: 2048,
            builtin_max_bytes: None,
            op: Some(ReduceOp::Sum),
            root: Some(0),
            ranks: Some(cfg.machine.ranks.min(8)),
            core_num: Some(1 + mode % 2),
            strace: Some(d.join("s.txt")),
            ..SweepArgs::new(Some(path))
        };
        let mut out = Vec::new();
        let mut r = sweep(&mut out, &a);
        if r.is_ok() && mode >= 3 {
            // Every tutorial program (the cube one included) on the same machine.
            r = ranksim_cli::commands::run::run(&mut out, None, Some(&a.config.clone().unwrap()), None, false);
        }
        std::fs::remove_dir_all(&d).ok();
        // An accepted config must give a result (rows, possibly FAILED with a reason).
        Ok(r.map(|s| (s, String::from_utf8_lossy(&out).into_owned())).map_err(|e| format!("sweep failed: {e}")))
    })
}

/// Checks one generated config: refused naming `key`, or accepted with a result.
fn check_config(text: String, key: &str, mode: usize) -> Result<(), TestCaseError> {
    match try_config(text.clone(), mode) {
        Err(why) => Err(TestCaseError::fail(format!("{why}\nkey `{key}`, config:\n{text}"))),
        Ok(Err(e)) if !e.contains(key) => {
            Err(TestCaseError::fail(format!("the error does not name `{key}`: {e}\nconfig:\n{text}")))
        }
        Ok(Err(_)) => Ok(()),
        // Refused by the sweep rather than by the loader (`machine.ranks = 1` is a machine a
        // program may run on, but no collective): still a refusal that names the key.
        Ok(Ok(Err(e))) if e.contains(&format!("{key} =")) => Ok(()),
        Ok(Ok(Err(e))) => Err(TestCaseError::fail(format!("accepted but: {e}\nkey `{key}`\nconfig:\n{text}"))),
        Ok(Ok(Ok((_, table)))) => {
            prop_assert!(table.contains("Avg bus bandwidth") || table.contains("FAILED"), "{}", table);
            Ok(())
        }
    }
}

/// Preset `i` of those with at most 16 ranks (cluster1024 is two-node with two counts
/// changed; a mutated 1024-rank sweep would only make the fuzz slow), resolved: every key
/// stated, none left to a base.
fn preset_value(i: usize) -> (&'static str, Value) {
    let small: Vec<(&str, ranksim::Config)> = ranksim::config::PRESETS
        .iter()
        .filter_map(|(name, _)| Some((*name, ranksim::Config::preset(name).ok()?)))
        .filter(|(_, c)| c.machine.ranks <= 16)
        .collect();
    let (name, cfg) = &small[i % small.len()];
    (name, Value::try_from(cfg).unwrap())
}

proptest! {
    #![proptest_config(config(64))]

    /// One leaf of a preset mutated: refused naming that key, or accepted and swept.
    #[test]
    fn fuzz_configs(preset in 0usize..6, leaf in any::<prop::sample::Index>(), m in mutation(), mode in 0usize..6) {
        let (_, mut doc) = preset_value(preset);
        let mut all = Vec::new();
        leaves(&doc, &mut Vec::new(), &mut all);
        let path = leaf.get(&all).clone();
        let key = mutate(&mut doc, &path, &m);
        check_config(toml::to_string(&doc).unwrap(), &key, mode)?;
    }
}

// ---------------------------------------------------------------------------------------------
// Kernels

/// One program-API call with generated arguments (offsets and shapes may be out of range,
/// peers past the last rank, cycle counts up to `u64::MAX`).
#[derive(Clone, Debug)]
enum KOp {
    Load([usize; 2], [usize; 2]),
    Store([usize; 2], [usize; 2]),
    RemoteLoad(usize, [usize; 2], [usize; 2]),
    RemoteStore(usize, [usize; 2], [usize; 2]),
    Notify(usize, usize, i32),
    Wait(usize, i32),
    Test(usize, i32),
    Compute(u64),
    Put(usize),
    Fence,
    Scalar([usize; 2]),
    /// A put or get with generated chunk geometry (zero rows or columns included).
    Copy(bool, usize, [usize; 2], bool),
    /// Two tiles of generated shapes added.
    Add([usize; 2], [usize; 2]),
    /// A tile reshaped to generated dimensions.
    Reshape([usize; 2], [usize; 2]),
    /// A flag set and waited between two generated pipes, with a generated event id.
    Flag(usize, usize, u32, bool),
    /// An asynchronous load, then its wait.
    LoadAsync([usize; 2], [usize; 2]),
}

fn kop() -> impl Strategy<Value = KOp> {
    let off = || [0usize..6, 0usize..80].prop_map(|[a, b]| [a, b]);
    let shape = || [0usize..6, 0usize..80].prop_map(|[a, b]| [a, b]);
    let cycles = prop_oneof![0u64..10_000, Just(u64::MAX), Just(u64::MAX / 1_500), any::<u64>()];
    prop_oneof![
        (off(), shape()).prop_map(|(o, s)| KOp::Load(o, s)),
        (off(), shape()).prop_map(|(o, s)| KOp::Store(o, s)),
        (0usize..6, off(), shape()).prop_map(|(p, o, s)| KOp::RemoteLoad(p, o, s)),
        (0usize..6, off(), shape()).prop_map(|(p, o, s)| KOp::RemoteStore(p, o, s)),
        (0usize..6, 0usize..6, -2i32..3).prop_map(|(p, i, v)| KOp::Notify(p, i, v)),
        (0usize..6, -1i32..2).prop_map(|(i, v)| KOp::Wait(i, v)),
        (0usize..6, -1i32..2).prop_map(|(i, v)| KOp::Test(i, v)),
        cycles.prop_map(KOp::Compute),
        (0usize..6).prop_map(KOp::Put),
        Just(KOp::Fence),
        off().prop_map(KOp::Scalar),
        (any::<bool>(), 0usize..6, shape(), any::<bool>()).prop_map(|(g, p, c, pp)| KOp::Copy(g, p, c, pp)),
        (shape(), shape()).prop_map(|(a, b)| KOp::Add(a, b)),
        (shape(), shape()).prop_map(|(a, b)| KOp::Reshape(a, b)),
        (0usize..4, 0usize..4, prop_oneof![0u32..4, any::<u32>()], any::<bool>())
            .prop_map(|(a, b, e, w)| KOp::Flag(a, b, e, w)),
        (off(), shape()).prop_map(|(o, s)| KOp::LoadAsync(o, s)),
    ]
}

const PIPES: [Pipe; 4] = [Pipe::Mte2, Pipe::Vector, Pipe::Mte3, Pipe::Scalar];

fn apply(c: &mut Core, op: &KOp, x: &Tensor, sig: &Tensor) -> SimResult<()> {
    match *op {
        KOp::Load(o, s) => c.load(x, &o, &s).map(|_| ()),
        KOp::Store(o, s) => c.store(&Tile::zeros(DType::F32, s[0], s[1]), x, &o),
        KOp::RemoteLoad(p, o, s) => c.remote_load(x, p, &o, &s).map(|_| ()),
        KOp::RemoteStore(p, o, s) => c.remote_store(&Tile::zeros(DType::F32, s[0], s[1]), x, p, &o, AtomicType::None),
        KOp::Notify(p, i, v) => c.notify(sig, p, &[i, 0], v, NotifyOp::AtomicAdd),
        KOp::Wait(i, v) => c.wait(sig, &[i, 0], v, WaitCmp::Ge),
        KOp::Test(i, v) => c.test_signal(sig, &[i, 0], v, WaitCmp::Eq).map(|_| ()),
        KOp::Compute(n) => {
            c.compute(n);
            Ok(())
        }
        KOp::Put(p) => c.put(x, p, x, &CopyOpts::new().chunks(1, 64)),
        KOp::Fence => c.fence(),
        KOp::Scalar(o) => c.read_scalar(x, &o).map(|_| ()),
        KOp::Copy(get, p, [r, k], pipe) => {
            let opts = CopyOpts::new().chunks(r, k).pipeline(pipe);
            if get { c.get(x, p, x, &opts) } else { c.put(x, p, x, &opts) }
        }
        KOp::Add(a, b) => c.add(&Tile::zeros(DType::F32, a[0], a[1]), &Tile::zeros(DType::F32, b[0], b[1])).map(|_| ()),
        KOp::Reshape(a, b) => c.reshape(&Tile::zeros(DType::F32, a[0], a[1]), b[0], b[1]).map(|_| ()),
        KOp::Flag(a, b, e, wait) => {
            c.overlap_pipes();
            c.set_flag(PIPES[a], PIPES[b], e)?;
            if wait { c.wait_flag(PIPES[a], PIPES[b], e) } else { Ok(()) }
        }
        KOp::LoadAsync(o, s) => {
            let l = c.load_async(x, &o, &s)?;
            c.wait_load(l).map(|_| ())
        }
    }
}

/// The name an error about `op` must carry.
fn op_name(op: &KOp) -> &'static str {
    match op {
        KOp::Load(..) => "load",
        KOp::Store(..) => "store",
        KOp::RemoteLoad(..) => "remote_load",
        KOp::RemoteStore(..) => "remote_store",
        KOp::Notify(..) => "notify",
        KOp::Wait(..) => "wait",
        KOp::Test(..) => "test_signal",
        KOp::Compute(_) => "compute",
        KOp::Put(_) => "put",
        KOp::Fence => "fence",
        KOp::Scalar(_) => "read_scalar",
        KOp::Copy(true, ..) => "get",
        KOp::Copy(false, ..) => "put",
        KOp::Add(..) => "add",
        KOp::Reshape(..) => "reshape",
        KOp::Flag(..) => "flag",
        KOp::LoadAsync(..) => "load",
    }
}

proptest! {
    #![proptest_config(config(128))]

    /// A kernel of random calls with random arguments on rank `rank` of a 4-rank machine: the
    /// run ends (no hang), never with a panic inside the simulator, and an argument error names
    /// one of the operations the kernel called.
    #[test]
    fn fuzz_kernels(rank in 0usize..4, ops in prop::collection::vec(kop(), 1..6)) {
        let ops2 = ops.clone();
        let r = guarded(move || {
            let mut w = simple(4);
            let dom = w.world_domain("d").unwrap();
            let x = w.alloc_window(&dom, "x", DType::F32, &[4, 64]).unwrap();
            let sig = w.alloc_window(&dom, "sig", DType::I32, &[4, 1]).unwrap();
            let k = Dispatch::kernel("fuzz", 1, move |c| {
                for op in &ops2 {
                    apply(c, op, &x, &sig)?;
                }
                Ok(())
            });
            w.dispatch(rank, k.in_domain(&dom)).unwrap();
            w.run().map(|_| ())
        });
        match r {
            Err(why) => prop_assert!(false, "{} for {:?}", why, ops),
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                let msg = e.to_string();
                prop_assert!(!matches!(e, SimError::KernelPanic { .. }), "a panic inside the simulator: {}", msg);
                if matches!(e, SimError::BadOp { .. }) {
                    prop_assert!(ops.iter().any(|o| msg.contains(op_name(o))), "{} names no op of {:?}", msg, ops);
                }
                if msg.contains("overflowed") {
                    prop_assert!(msg.contains(&format!("chip {rank} core 0")), "{}", msg);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Command lines (the built binary)

fn pick(pool: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop::sample::select(pool).prop_map(|s| s.to_string())
}

/// Sizes: small valid ones, and ones refused whatever else is given (never a valid size so
/// large that the run would be long).
const SIZES: &[&str] = &["1", "4", "1000", "1K", "4K", "8K", "0", "32G", "18446744073709551615", "12Q", "-1", "1.5K"];
const COUNTS: &[&str] = &["0", "1", "2", "10001", "4294967295", "4294967296", "-1", "x"];
/// Floats (step factors, bus bandwidths). No factor just above 1: `-f 1.001` from 1K to 8K is
/// two thousand valid sizes, a long run rather than a bad input (the repeated-row rule has its
/// own test).
const FLOATS: &[&str] = &["0", "2", "1.1", "1", "-2", "nan", "NaN", "inf", "-inf", "1e308", "5"];
const RANKS: &[&str] = &["0", "1", "2", "4", "8", "9", "17", "18446744073709551615"];
const JITTER: &[&str] = &["0", "20", "1000000000", "1000000001", "18446744073709551615"];
const COLLECTIVES: &[&str] = &[
    "allreduce",
    "allgather",
    "reduce_scatter",
    "broadcast",
    "all_to_all",
    "all_to_all_v",
    "barrier",
    "allreduce,allgather",
    "nope",
];
const MODES: &[&str] = &["mesh", "ring", "two-shot", "aiv-mesh", "sdma-mesh", "mesh,ring", "bogus"];
const DTYPES: &[&str] = &["f32", "f16", "bf16", "i32", "i16", "i8", "f64"];

/// One optional flag: `None` leaves it out.
fn flag(name: &'static str, values: &'static [&'static str]) -> impl Strategy<Value = Option<Vec<String>>> {
    prop::option::weighted(0.4, pick(values).prop_map(move |v| vec![name.to_string(), v]))
}

fn sweep_argv() -> impl Strategy<Value = Vec<String>> {
    (
        (flag("--collective", COLLECTIVES), flag("--mode", MODES), flag("--path", &["host", "incore", "x"])),
        (flag("-b", SIZES), flag("-e", SIZES), flag("-f", FLOATS), flag("-d", DTYPES)),
        (flag("-o", &["sum", "max", "min", "prod", "avg"]), flag("-r", RANKS), flag("-n", COUNTS), flag("-w", COUNTS)),
        (flag("--ranks", RANKS), flag("--core-num", &["0", "1", "2", "48", "49"]), flag("--min-busbw", FLOATS)),
        (flag("--seed", &["1", "7"]), flag("--jitter-op-ns", JITTER), flag("--jitter-dispatch-ns", JITTER)),
        any::<bool>(),
    )
        .prop_map(|(a, b, c, d, e, no_data)| {
            let mut v = vec!["sweep".to_string()];
            let flags = [a.0, a.1, a.2, b.0, b.1, b.2, b.3, c.0, c.1, c.2, c.3, d.0, d.1, d.2, e.0, e.1, e.2];
            v.extend(flags.into_iter().flatten().flatten());
            // Keep valid runs short: -e is at most 8K unless generated.
            if !v.iter().any(|a| a == "-e") {
                v.extend(["-e".to_string(), "8K".to_string()]);
            }
            if no_data {
                v.push("--no-data".into());
            }
            v
        })
}

fn bench_argv() -> impl Strategy<Value = Vec<String>> {
    (
        (flag("--collective", COLLECTIVES), flag("--mode", MODES), flag("--path", &["host", "incore"])),
        (flag("-b", SIZES), flag("-d", DTYPES), flag("-r", RANKS), flag("-n", COUNTS), flag("-w", COUNTS)),
        (flag("--ranks", RANKS), flag("--seed", &["1"]), flag("--jitter-op-ns", JITTER)),
    )
        .prop_map(|(a, b, c)| {
            let mut v = vec!["bench".to_string()];
            let flags = [a.0, a.1, a.2, b.0, b.1, b.2, b.3, b.4, c.0, c.1, c.2];
            v.extend(flags.into_iter().flatten().flatten());
            for (flag, default) in [("-b", "4K"), ("-n", "2"), ("-w", "1")] {
                if !v.iter().any(|a| a == flag) {
                    v.extend([flag.to_string(), default.to_string()]);
                }
            }
            v
        })
}

fn other_argv() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        (flag("--config", &["a2a3", "ring8", "torus4x4", "nope"]), flag("--route", &["0", "9"])).prop_map(|(c, r)| {
            let mut v = vec!["topo".to_string()];
            v.extend(c.into_iter().flatten());
            if let Some(r) = r {
                v.extend([r[0].clone(), "0".into(), r[1].clone()]);
            }
            v
        }),
        (pick(&["hello_rank", "put", "barrier", "nope"]), flag("--ranks", RANKS)).prop_map(|(p, r)| {
            let mut v = vec!["run".to_string(), p];
            v.extend(r.into_iter().flatten());
            v
        }),
        (
            pick(&["hello_rank", "put", "broken-no-fence", "nope"]),
            flag("--seeds", &["0", "1", "100001"]),
            flag("--jitter-op-ns", JITTER),
            flag("--ranks", RANKS)
        )
            .prop_map(|(p, s, j, r)| {
                let mut v = vec!["check".to_string(), "--program".into(), p];
                v.extend([s, j, r].into_iter().flatten().flatten());
                v
            }),
    ]
}

/// Runs the binary with `argv` under the hang guard: exit code and stdout + stderr.
fn ranksim(argv: &[String]) -> Result<(i32, String), String> {
    let d = scratch();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ranksim"))
        .args(argv)
        .current_dir(&d)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    while child.try_wait().map_err(|e| e.to_string())?.is_none() {
        if start.elapsed() > HANG_GUARD {
            child.kill().ok();
            child.wait().ok();
            return Err(format!("no exit within {HANG_GUARD:?}: a hang"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    std::fs::remove_dir_all(&d).ok();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    Ok((out.status.code().unwrap_or(-1), text))
}

/// Checks one command line: exit 0 / 1 with output, or 2 with an error naming an argument.
fn check_cli(argv: Vec<String>) -> Result<(), TestCaseError> {
    let (code, text) = ranksim(&argv).map_err(|e| TestCaseError::fail(format!("{e}: {argv:?}")))?;
    prop_assert!(!text.contains("panicked"), "a panic for {:?}:\n{}", argv, text);
    prop_assert!(matches!(code, 0..=2), "exit {} for {:?}:\n{}", code, argv, text);
    if code == 2 {
        let err = text.lines().find(|l| l.starts_with("error")).unwrap_or(&text);
        // The error names a flag or a value given (clap quotes the flag; ours name the flag,
        // the value, the program or the collective).
        let named =
            argv[1..].iter().any(|a| (a.len() > 1 && err.contains(a.as_str())) || err.contains(&format!("'{a}'")));
        prop_assert!(named, "the error names no argument of {:?}:\n{}", argv, text);
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn fuzz_sweep_command_lines(argv in sweep_argv()) {
        check_cli(argv)?;
    }

    #[test]
    fn fuzz_other_command_lines(argv in prop_oneof![bench_argv(), other_argv()]) {
        check_cli(argv)?;
    }
}

// ---------------------------------------------------------------------------------------------
// What the harness found, kept as named regressions.

/// `--min-busbw -inf` was split by clap into short flags (`unexpected argument '-i'`), an error
/// that named no argument given; the flag now takes hyphen values and our check names it.
#[test]
fn regression_min_busbw_negative_infinity_names_the_flag() {
    for v in ["-inf", "-1", "-0.5"] {
        let (code, text) =
            ranksim(&["sweep".into(), "--min-busbw".into(), v.into(), "-e".into(), "8K".into()]).unwrap();
        assert_eq!(code, 2, "{text}");
        assert!(text.contains(&format!("error: --min-busbw {v}: must be a finite number")), "{text}");
    }
}

/// A hierarchical node of `i64::MAX` ranks overflowed `node.ranks x groups`, and the error
/// named only `levels[0].groups`; it now names `topology.node.ranks` too.
#[test]
fn regression_a_huge_node_names_its_ranks() {
    let text = include_str!("../../../configs/a3-supernode.toml");
    let old = "ranks = 2                      # 2 dies per 910C package";
    assert!(text.contains(old));
    let e = Config::from_toml(&text.replace(old, "ranks = 9223372036854775807 #"), "t").unwrap_err().to_string();
    assert!(
        e.contains("fabric.topology.levels[0].groups") && e.contains("topology.node.ranks = 9223372036854775807"),
        "{e}"
    );
}

/// `-f -inf` was split by clap into short flags, like `--min-busbw -inf`.
#[test]
fn regression_a_negative_step_factor_names_the_flag() {
    let (code, text) = ranksim(&["sweep".into(), "-f".into(), "-inf".into(), "-e".into(), "8K".into()]).unwrap();
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("error: -b 1024 -e 8192 -f -inf: invalid sweep: step factor -inf"), "{text}");
}

/// Adding tiles of different shapes was reported as `tile op: tile sum`, naming no call the
/// kernel made; it now names `add` (and `max` / `min` / `mul` for theirs).
#[test]
fn regression_tile_arithmetic_errors_name_the_call() {
    let mut w = simple(2);
    let dom = w.world_domain("d").unwrap();
    let k =
        Dispatch::kernel("k", 1, |c| c.add(&Tile::zeros(DType::F32, 0, 0), &Tile::zeros(DType::F32, 0, 1)).map(|_| ()));
    w.dispatch(0, k.in_domain(&dom)).unwrap();
    let e = w.run().unwrap_err().to_string();
    assert!(e.contains(": add: ") && e.contains("operands differ"), "{e}");
}
