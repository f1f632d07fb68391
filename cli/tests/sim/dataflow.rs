//! Task dependencies from declared tensors (PyPTO's tensor tags through the TensorMap): the
//! edges each tag makes, byte-range overlap of slices, `after` combined with them, the
//! checker's view of them, and the declarations that are refused.

use crate::common::simple;
use ranksim::prelude::*;
use ranksim::sim_core::stats::TaskRecord;

/// A task that spends `cycles` and then stores `value` into the whole of `dst` (f32 [1, 16]).
fn producer(name: &str, cycles: u64, value: f32, dst: &Tensor) -> Task {
    let d = dst.clone();
    Task::new(name, 1, move |c| {
        c.compute(cycles);
        c.store(&Tile::from_slice(1, 16, &[value; 16])?, &d, &[0, 0])
    })
}

/// A task that copies `src` (f32 [1, 16]) into `dst`.
fn copier(name: &str, src: &Tensor, dst: &Tensor) -> Task {
    let (s, d) = (src.clone(), dst.clone());
    Task::new(name, 1, move |c| {
        let t = c.load(&s, &[0, 0], &[1, 16])?;
        c.store(&t, &d, &[0, 0])
    })
}

/// The record of task `name` in the run's only dispatch.
fn task<'a>(r: &'a RunReport, name: &str) -> &'a TaskRecord {
    r.dispatches[0].tasks.iter().find(|t| t.name == name).unwrap()
}

/// Producer -> consumer on one chip, with or without the declarations; returns what the
/// consumer copied and the run.
fn producer_consumer(declare: bool, check: bool) -> (Vec<f32>, RunReport) {
    let mut w = simple(1);
    w.options_mut().check = check;
    let x = w.alloc_tensor("x", DType::F32, &[1, 16]).unwrap();
    let y = w.alloc_tensor("y", DType::F32, &[1, 16]).unwrap();
    let mut d = Dispatch::new("pc");
    let (mut p, mut c) = (producer("producer", 5000, 3.0, &x), copier("consumer", &x, &y));
    if declare {
        p = p.output(&x);
        c = c.input(&x).output(&y);
    }
    d.add(p);
    d.add(c);
    w.dispatch(0, d).unwrap();
    let r = w.run().unwrap();
    (w.read::<f32>(&y, 0).unwrap(), r)
}

#[test]
fn a_reader_starts_after_the_writer_of_what_it_declares() {
    let (got, r) = producer_consumer(true, false);
    assert_eq!(got, vec![3.0; 16]);
    assert!(task(&r, "consumer").start >= task(&r, "producer").end, "{r:#?}");
    // Undeclared, both start at once on two cores and the consumer copies zeros.
    let (got, r) = producer_consumer(false, false);
    assert_eq!(got, vec![0.0; 16]);
    assert_eq!(task(&r, "consumer").start, task(&r, "producer").start);
}

#[test]
fn data_flow_edges_order_tasks_for_the_checker_as_after_does() {
    let (_, r) = producer_consumer(true, true);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let (_, r) = producer_consumer(false, true);
    let races: Vec<_> = r.findings.iter().filter(|f| f.kind == FindingKind::DataRace).collect();
    assert_eq!(races.len(), 1, "{:#?}", r.findings);
    let ops: Vec<_> = races[0].sites.iter().map(|s| (s.task.as_str(), s.op.as_str())).collect();
    // The consumer's load comes first: it reads before the producer stores.
    assert_eq!(ops, vec![("consumer", "load"), ("producer", "store")]);
}

#[test]
fn explicit_after_combines_with_data_flow_edges() {
    let mut w = simple(1);
    let x = w.alloc_tensor("x", DType::F32, &[1, 16]).unwrap();
    let y = w.alloc_tensor("y", DType::F32, &[1, 16]).unwrap();
    let z = w.alloc_tensor("z", DType::F32, &[1, 16]).unwrap();
    let mut d = Dispatch::new("mix");
    let a = d.add(producer("a", 9000, 1.0, &z)); // declares nothing
    d.add(producer("b", 2000, 2.0, &x).output(&x));
    d.add(copier("c", &x, &y).input(&x).output(&y).after(&[a]));
    assert_eq!(d.tasks()[2].deps(), &[a], "before queueing only `after` is known");
    w.dispatch(0, d).unwrap();
    let r = w.run().unwrap();
    let (ta, tb, tc) = (task(&r, "a"), task(&r, "b"), task(&r, "c"));
    assert_eq!(tc.start, ta.end.max(tb.end));
    assert!(ta.end > tb.end, "the explicit edge is the later one here");
    assert_eq!(w.read::<f32>(&y, 0).unwrap(), vec![2.0; 16]);
}

#[test]
fn writers_do_not_wait_for_earlier_readers_as_in_the_tensor_map() {
    // INPUT then OUTPUT_EXISTING of the same bytes: the TensorMap keeps writers only, so
    // there is no write-after-read edge; the checker reports the race and `after` fixes it.
    for order in [false, true] {
        let mut w = simple(1);
        w.options_mut().check = true;
        let x = w.alloc_tensor("x", DType::F32, &[1, 16]).unwrap();
        let y = w.alloc_tensor("y", DType::F32, &[1, 16]).unwrap();
        w.write(&x, 0, &[1.0f32; 16]).unwrap();
        let mut d = Dispatch::new("war");
        let reader = d.add(copier("reader", &x, &y).input(&x).output(&y));
        let writer = producer("writer", 0, 7.0, &x).output_existing(&x);
        d.add(if order { writer.after(&[reader]) } else { writer });
        w.dispatch(0, d).unwrap();
        let r = w.run().unwrap();
        let races = r.findings.iter().filter(|f| f.kind == FindingKind::DataRace).count();
        assert_eq!(races, usize::from(!order), "after={order}: {:#?}", r.findings);
        if order {
            assert_eq!(w.read::<f32>(&y, 0).unwrap(), vec![1.0; 16]);
        }
    }
}

#[test]
fn inout_chains_writers_and_output_existing_does_not() {
    // acc += 1 three times: INOUT orders each after the last; OUTPUT_EXISTING writers run at
    // once (no write-after-write edge).
    let run = |dir: ArgDir| {
        let mut w = simple(1);
        let acc = w.alloc_tensor("acc", DType::F32, &[1, 16]).unwrap();
        w.write(&acc, 0, &[0.0f32; 16]).unwrap();
        let mut d = Dispatch::new("acc");
        for i in 0..3 {
            let a = acc.clone();
            d.add(
                Task::new(&format!("add{i}"), 1, move |c| {
                    let t = c.load(&a, &[0, 0], &[1, 16])?;
                    c.compute(1000);
                    let t = c.adds(&t, 1.0)?;
                    c.store(&t, &a, &[0, 0])
                })
                .arg(dir, &acc),
            );
        }
        w.dispatch(0, d).unwrap();
        let r = w.run().unwrap();
        let starts: Vec<SimTime> = r.dispatches[0].tasks.iter().map(|t| t.start).collect();
        (w.read::<f32>(&acc, 0).unwrap()[0], starts)
    };
    let (v, s) = run(ArgDir::InOut);
    assert_eq!(v, 3.0);
    assert!(s[0] < s[1] && s[1] < s[2], "{s:?}");
    let (v, s) = run(ArgDir::OutputExisting);
    assert_eq!(v, 1.0, "three racing increments of 0");
    assert!(s[0] == s[1] && s[1] == s[2], "{s:?}");
}

#[test]
fn slices_sharing_no_byte_make_no_edge() {
    // Two producers fill the halves of one buffer; a reader of the top half waits only for
    // the top producer, a reader of the whole buffer for both.
    let mut w = simple(1);
    let x = w.alloc_tensor("x", DType::F32, &[2, 16]).unwrap();
    let out = w.alloc_tensor("out", DType::F32, &[3, 16]).unwrap();
    let (top, bottom) = (x.slice(&[0, 0], &[1, 16]).unwrap(), x.slice(&[1, 0], &[1, 16]).unwrap());
    let mut d = Dispatch::new("halves");
    d.add(producer("top", 1000, 1.0, &top).output_existing(&top));
    d.add(producer("bottom", 8000, 2.0, &bottom).output_existing(&bottom));
    d.add(copier("read_top", &top, &out.slice(&[0, 0], &[1, 16]).unwrap()).input(&top));
    let (xk, o) = (x.clone(), out.clone());
    d.add(
        Task::new("read_all", 1, move |c| {
            let t = c.load(&xk, &[0, 0], &[2, 16])?;
            c.store(&t, &o, &[1, 0])
        })
        .input(&x),
    );
    w.dispatch(0, d).unwrap();
    let r = w.run().unwrap();
    assert_eq!(task(&r, "read_top").start, task(&r, "top").end);
    assert!(task(&r, "read_top").end < task(&r, "bottom").end);
    assert_eq!(task(&r, "read_all").start, task(&r, "bottom").end);
    let got = w.read::<f32>(&out, 0).unwrap();
    assert_eq!(got[..16], [1.0; 16]);
    assert_eq!(got[16..32], [1.0; 16]);
    assert_eq!(got[32..], [2.0; 16]);
}

#[test]
fn a_read_nothing_can_have_produced_is_refused_naming_the_values() {
    let mut w = simple(2);
    let x = w.alloc_tensor("x", DType::F32, &[1, 16]).unwrap();
    let y = w.alloc_tensor("y", DType::F32, &[1, 16]).unwrap();
    let e = w.dispatch(1, Dispatch::new("d").tap(|d| d.add(copier("consumer", &x, &y).input(&x)))).unwrap_err();
    let e = e.to_string();
    for want in ["task `consumer`", "dispatch `d`", "rank 1", "x<f32>[1, 16] (gm)", "as INPUT", "nothing produces it"] {
        assert!(e.contains(want), "{want}: {e}");
    }
    // INOUT reads too.
    let e = w.dispatch(1, Dispatch::new("d").tap(|d| d.add(copier("acc", &x, &x).inout(&x)))).unwrap_err();
    assert!(e.to_string().contains("as INOUT"), "{e}");
    // Staged by the host on that rank: fine there, still refused on the other one.
    w.write(&x, 1, &[5.0f32; 16]).unwrap();
    w.dispatch(1, Dispatch::new("d").tap(|d| d.add(copier("consumer", &x, &y).input(&x)))).unwrap();
    assert!(w.dispatch(0, Dispatch::new("d").tap(|d| d.add(copier("consumer", &x, &y).input(&x)))).is_err());
    // A declared writer in an earlier dispatch of the chip makes it fine.
    w.dispatch(0, Dispatch::new("p").tap(|d| d.add(producer("p", 0, 4.0, &x).output(&x)))).unwrap();
    w.dispatch(0, Dispatch::new("c").tap(|d| d.add(copier("consumer", &x, &y).input(&x).output(&y)))).unwrap();
    w.run().unwrap();
    assert_eq!((w.read::<f32>(&y, 0).unwrap()[0], w.read::<f32>(&y, 1).unwrap()[0]), (4.0, 5.0));
    // A task that declares nothing may write anything: later declared reads are trusted.
    let z = w.alloc_tensor("z", DType::F32, &[1, 16]).unwrap();
    w.dispatch(0, Dispatch::new("opaque").tap(|d| d.add(producer("p", 0, 6.0, &z)))).unwrap();
    w.dispatch(0, Dispatch::new("c").tap(|d| d.add(copier("consumer", &z, &y).input(&z)))).unwrap();
    w.run().unwrap();
    assert_eq!(w.read::<f32>(&y, 0).unwrap()[0], 6.0);
}

#[test]
fn window_reads_need_no_producer_but_the_chip_must_see_the_window() {
    let mut w = simple(3);
    let dom = w.create_domain("pair", &[0, 1], DomainOptions::default()).unwrap();
    let win = w.alloc_window(&dom, "win", DType::F32, &[1, 16]).unwrap();
    let y = w.alloc_tensor("y", DType::F32, &[1, 16]).unwrap();
    // Windows start zeroed and peers write them: a declared read is fine.
    w.dispatch(0, Dispatch::new("d").tap(|d| d.add(copier("c", &win, &y).input(&win)))).unwrap();
    let e = w.dispatch(2, Dispatch::new("d").tap(|d| d.add(copier("c", &win, &y).input(&win)))).unwrap_err();
    let e = e.to_string();
    for want in ["task `c`", "rank 2", "win<f32>[1, 16] (window@pair)", "members [0, 1]", "not a member"] {
        assert!(e.contains(want), "{want}: {e}");
    }
}

#[test]
fn an_output_over_bytes_an_earlier_task_uses_is_refused() {
    let mut w = simple(1);
    let x = w.alloc_tensor("x", DType::F32, &[2, 16]).unwrap();
    w.write(&x, 0, &[0.0f32; 32]).unwrap();
    let row = x.slice(&[1, 0], &[1, 16]).unwrap();
    let mut d = Dispatch::new("d");
    d.add(copier("reader", &row, &row).input(&row));
    d.add(producer("maker", 0, 1.0, &x).output(&x));
    let e = w.dispatch(0, d).unwrap_err().to_string();
    for want in ["task `maker` (#1)", "x<f32>[2, 16] (gm) as output", "`reader` (#0)", "x<f32>[1, 16] (gm) as INPUT"] {
        assert!(e.contains(want), "{want}: {e}");
    }
}

/// `Dispatch` built in place.
trait Tap {
    fn tap(self, f: impl FnOnce(&mut Self) -> TaskId) -> Self;
}

impl Tap for Dispatch {
    fn tap(mut self, f: impl FnOnce(&mut Dispatch) -> TaskId) -> Dispatch {
        f(&mut self);
        self
    }
}
