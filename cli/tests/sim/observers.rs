//! Observers of your own (`sim_core::observe::Observe`): the `link_busy` example's numbers on
//! a machine where they have a closed form, an observer changing nothing of a run, and the ids
//! that pair an issued write, notify or SDMA transfer with its landing or completion.

use crate::examples::example_dir;
use crate::flows::links_only;
use ranksim::Config;
use ranksim::prelude::*;
use ranksim::sim_core::Cond;
use ranksim::sim_core::observe::{
    CoreId, EqWaiters, MemRegion, Observe, OpAt, OpId, OpInfo, SdmaId, SignalCell, SignalCells, WriteId,
};
use ranksim::sim_core::trace::LinkBusy;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

/// The links-only 2-rank full mesh: links 10 GB/s (100 ps per byte), 4 KiB packets.
fn links_only_mesh() -> String {
    links_only(2, 4096, "kind = \"full_mesh\"\nlink_gbps = 10.0\nlink_latency_ns = 1000.0\n")
}

#[test]
fn the_link_busy_example_reports_a_links_serialization_time_and_the_bytes_stored() {
    let toml = std::env::temp_dir().join(format!("ranksim-link-busy-{}.toml", std::process::id()));
    std::fs::write(&toml, links_only_mesh()).expect("a temporary config");
    let n = 40960;
    let out = std::process::Command::new(example_dir().join("link_busy"))
        .args([toml.to_str().expect("a UTF-8 path"), &n.to_string()])
        .output()
        .expect("the link_busy example runs");
    let _ = std::fs::remove_file(&toml);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    // 40960 B at 10 GB/s: 100 ps per byte on the link, in 10 packets of 4 KiB.
    assert!(text.contains(&format!("link 0->1: busy {:>12} ps for {n:>9} B", n * 100)), "{text}");
    assert!(text.contains(&format!("keep it busy {} ps", n * 100)), "{text}");
    assert!(text.contains(&format!("rank 0: stored {n} B to peers (traffic counters: {n} B)")), "{text}");
    assert!(text.contains("rank 1: stored 0 B to peers (traffic counters: 0 B)"), "{text}");
    assert!(text.trim_end().ends_with("OK"), "{text}");
}

/// Everything an observer saw that pairs facts by id.
#[derive(Debug, Default)]
struct Log {
    ranks: usize,
    ended: Option<SimTime>,
    ops: Vec<u64>,
    resumed: usize,
    writes: Vec<u64>,
    landed: Vec<u64>,
    notify_ops: BTreeSet<u64>,
    notifies: Vec<u64>,
    notified: Vec<u64>,
    waits: BTreeSet<u64>,
    released: Vec<(u64, Option<u64>)>,
    posted: Vec<u64>,
    moved: Vec<(u64, u64)>,
    completed: Vec<(u64, bool)>,
    links: u64,
    remote_stored: u64,
}

/// Records ids; wants links, so the run collects them whether traced or not.
struct Recorder(Arc<Mutex<Log>>);

impl Recorder {
    fn log(&self) -> std::sync::MutexGuard<'_, Log> {
        self.0.lock().unwrap()
    }
}

impl Observe for Recorder {
    fn wants_links(&self) -> bool {
        true
    }
    fn run_started(&mut self, ranks: usize, _cores: usize) {
        *self.log() = Log { ranks, ..Log::default() };
    }
    fn run_ended(&mut self, end: SimTime) {
        self.log().ended = Some(end);
    }
    fn op_started(&mut self, op: &OpInfo) {
        self.log().ops.push(op.id.get());
    }
    fn op_span(&mut self, op: &OpInfo, _end: SimTime) {
        self.log().ops.push(op.id.get());
    }
    fn resumed(&mut self, _core: CoreId, _at: SimTime) {
        self.log().resumed += 1;
    }
    fn store_posted(&mut self, core: CoreId, _op: OpId, to: usize, bytes: u64) {
        if to != core.rank() {
            self.log().remote_stored += bytes;
        }
    }
    fn write_issued(&mut self, _core: CoreId, id: WriteId, _dst: MemRegion<'_>, _atomic: bool, _at: OpAt) {
        self.log().writes.push(id.get());
    }
    fn write_landed(&mut self, id: WriteId) {
        self.log().landed.push(id.get());
    }
    fn notify_posted(&mut self, _core: CoreId, op: OpId, _to: usize) {
        self.log().notify_ops.insert(op.get());
    }
    fn notify_issued(&mut self, _c: CoreId, id: WriteId, _cell: SignalCell<'_>, _op: NotifyOp, _v: i32, _at: OpAt) {
        self.log().notifies.push(id.get());
    }
    fn notify_landed(&mut self, id: WriteId, _cell: SignalCell<'_>, _old_new: (i32, i32), _eq: EqWaiters<'_>) {
        self.log().notified.push(id.get());
    }
    fn wait_started(&mut self, _core: CoreId, op: OpId, _cells: SignalCells<'_>, _cond: Cond, _at: SimTime) {
        self.log().waits.insert(op.get());
    }
    fn wait_released(&mut self, _c: CoreId, op: OpId, _w: (SignalCells<'_>, Cond), _at: SimTime, by: Option<OpId>) {
        self.log().released.push((op.get(), by.map(OpId::get)));
    }
    fn sdma_posted(&mut self, _core: CoreId, (id, _op): (SdmaId, OpId), _get: bool, _p: Option<usize>, _b: u64) {
        self.log().posted.push(id.get());
    }
    fn sdma_moved(&mut self, (id, w): (SdmaId, WriteId), _places: (MemRegion<'_>, MemRegion<'_>), _a: bool, _at: OpAt) {
        let mut log = self.log();
        log.moved.push((id.get(), w.get()));
        log.writes.push(w.get());
    }
    fn sdma_completed(&mut self, _core: CoreId, id: SdmaId, retired: bool) {
        self.log().completed.push((id.get(), retired));
    }
    fn link_busy(&mut self, _busy: &LinkBusy) {
        self.log().links += 1;
    }
}

/// On 2 ranks of the a2a3 preset (which has SDMA): rank 0 stores a row into rank 1's window,
/// puts another, posts an SDMA put of a third and waits for it, then notifies; rank 1 waits
/// for the notify and reads the rows. Returns the report (with the Chrome trace when
/// `trace`), what rank 1 read, and the observer's log when one was attached.
fn store_put_sdma_notify(trace: bool, observe: bool) -> (RunReport, String, Vec<f32>, Option<Log>) {
    let cfg = Config::preset("a2a3").unwrap().with_ranks(2).unwrap();
    let mut w = cfg.world().unwrap();
    w.options_mut().trace = trace;
    let all = w.world_domain("all").unwrap();
    let data = w.alloc_window(&all, "data", DType::F32, &[3, 1024]).unwrap();
    let sig = w.alloc_window(&all, "sig", DType::I32, &[1, 8]).unwrap();
    for r in 0..2 {
        let rows: Vec<f32> = (0..3 * 1024).map(|i| (r * 10_000 + i) as f32).collect();
        w.write(&data, r, &rows).unwrap();
    }
    let (d, s) = (data.clone(), sig.clone());
    let kernel = Dispatch::kernel("observed", 1, move |core| {
        if core.rank() == 0 {
            let t = core.load(&d, &[0, 0], &[1, 1024])?;
            core.remote_store(&t, &d, 1, &[0, 0], AtomicType::None)?;
            core.put(&d, 1, &d, &CopyOpts::new().region(&[1, 0], &[1, 0], &[1, 1024]))?;
            let h = core.put_async(&d, 1, &d, &SdmaOpts::default().region(&[2, 0], &[2, 0], &[1, 1024]))?;
            core.wait_async(h)?;
            core.notify(&s, 1, &[0, 0], 1, NotifyOp::AtomicAdd)
        } else {
            core.wait(&s, &[0, 0], 1, WaitCmp::Ge)?;
            core.load(&d, &[0, 0], &[3, 1024]).map(|_| ())
        }
    });
    w.dispatch_all(&all, kernel.in_domain(&all)).unwrap();
    let log = Arc::new(Mutex::new(Log::default()));
    if observe {
        w.observe(Box::new(Recorder(log.clone())));
    }
    let mut report = w.run().unwrap();
    let chrome = report.trace.as_ref().map(|t| ranksim::formats::to_chrome_json(t, 2)).unwrap_or_default();
    let read = w.read::<f32>(&data, 1).unwrap();
    report.host = Default::default();
    let log = observe.then(|| std::mem::take(&mut *log.lock().unwrap()));
    (report, chrome, read, log)
}

#[test]
fn an_observer_changes_neither_the_times_nor_the_output() {
    for trace in [false, true] {
        let (plain, plain_chrome, plain_read, _) = store_put_sdma_notify(trace, false);
        let (seen, seen_chrome, seen_read, log) = store_put_sdma_notify(trace, true);
        assert_eq!(format!("{plain:?}"), format!("{seen:?}"), "trace {trace}");
        assert_eq!(plain_chrome, seen_chrome, "trace {trace}");
        assert_eq!(plain_read, seen_read);
        assert_eq!(plain_read[..1024], (0..1024).map(|i| i as f32).collect::<Vec<_>>()[..]);
        let log = log.unwrap();
        assert!(log.links > 0, "an observer that wants links gets them in an untraced run too");
        assert_eq!((log.ranks, log.ended), (2, Some(seen.end)));
        assert_eq!(log.remote_stored, seen.traffic[0].remote_write_bytes - 2 * 4096, "the put and SDMA rows");
        if trace {
            // The observer's operation ids are the timeline's span ids.
            let spans: BTreeSet<u64> = seen.trace.as_ref().unwrap().ops.iter().map(|o| o.id).collect();
            assert_eq!(spans, log.ops.iter().copied().collect::<BTreeSet<u64>>());
        }
    }
}

#[test]
fn an_issued_write_lands_with_its_id() {
    let log = store_put_sdma_notify(false, true).3.unwrap();
    // The remote store, the put's chunks and the SDMA descriptor: each lands once, with its id.
    assert!(log.writes.len() >= 3, "{log:?}");
    let mut landed = log.landed.clone();
    landed.sort();
    let mut issued = log.writes.clone();
    issued.sort();
    assert_eq!(issued, landed, "{log:?}");
}

#[test]
fn a_notify_lands_with_its_id_and_releases_the_wait_it_names() {
    let log = store_put_sdma_notify(false, true).3.unwrap();
    assert_eq!(log.notifies.len(), 1);
    assert_eq!(log.notifies, log.notified);
    // Writes, SDMA writes and notifies share one increasing sequence.
    assert!(log.writes.iter().all(|&w| w < log.notifies[0]), "{log:?}");
    let [(wait, Some(by))] = log.released[..] else { panic!("one wait released by a notify: {log:?}") };
    assert!(log.waits.contains(&wait), "{log:?}");
    assert!(log.notify_ops.contains(&by), "{log:?}");
}

#[test]
fn an_sdma_transfer_moves_and_completes_with_its_id() {
    let log = store_put_sdma_notify(false, true).3.unwrap();
    assert_eq!(log.posted, [1]);
    let [(x, w)] = log.moved[..] else { panic!("one descriptor: {log:?}") };
    assert_eq!(x, 1);
    assert!(log.landed.contains(&w), "the descriptor's write lands with its id: {log:?}");
    assert_eq!(log.completed, [(1, true)], "wait_async retires the transfer");
}
