//! The library's measuring API (`ranksim::measure`): sizes in bytes everywhere, one options
//! struct, typed errors, and the checker's one loop.

use ranksim::collectives::{Call, Kind, Mode};
use ranksim::measure::{self, Builtin, Error, Measure};
use ranksim::prelude::*;

/// The default machine, an allgather on 4 of its ranks, and measuring options for 4 ranks.
fn allgather_on_4() -> (ranksim::Config, Call, Measure) {
    (ranksim::Config::default_preset(), Call::new(Kind::AllGather, 4), Measure::new(4))
}

#[test]
fn every_function_takes_bytes() {
    let (cfg, call, m) = allgather_on_4();
    let c = Builtin(&call);
    // 64 KiB: the row's size is the size asked, and run moves the same elements.
    let p = measure::point(&cfg, &c, &m, 64 << 10).unwrap().unwrap();
    assert_eq!((p.row.size, p.row.nwrong), (64 << 10, Some(0)));
    let r = measure::run(&cfg, &c, &m, 64 << 10, 1).unwrap();
    assert_eq!(r.wrong.count(), 0);
    assert_eq!(r.report.device_time().as_us_f64(), p.row.time_us);
    // Traced only when the options say so.
    assert!(r.report.trace.is_none());
    let traced = measure::run(&cfg, &c, &Measure { trace: true, ..m.clone() }, 64 << 10, 1).unwrap();
    assert!(measure::chrome_trace(&traced.report, 4).is_some());
}

#[test]
fn errors_are_typed() {
    let (cfg, call, m) = allgather_on_4();
    let c = Builtin(&call);
    assert!(matches!(measure::run(&cfg, &c, &m, 1, 1), Err(Error::NoElement { size_bytes: 1 })));
    assert!(matches!(measure::bench(&cfg, &c, &m, 1), Err(Error::NoElement { size_bytes: 1 })));
    assert_eq!(measure::point(&cfg, &c, &m, 1).unwrap().map(|p| p.row), None);
    let e = measure::run(&cfg, &c, &Measure::new(99), 64 << 10, 1).unwrap_err();
    assert!(matches!(e, Error::Ranks { ranks: 99, machine: 8 }), "{e:?}");
    assert_eq!(e.to_string(), "99 ranks: the machine has 8; use 1..=8");
}

#[test]
fn a_check_cut_short_is_an_error_and_a_clean_one_keeps_its_timeline_when_asked() {
    let cfg = ranksim::Config::default_preset();
    // A ring whose count (9 elements) is not a multiple of the 8 ranks returns at once.
    let ring = Call::new(Kind::AllReduce, 8).with_mode(Mode::Ring);
    let e = measure::check(&cfg, &Builtin(&ring), &Measure::new(8), 36, 1, &CheckOptions::default()).unwrap_err();
    assert!(matches!(e, Error::CutShort { .. }), "{e:?}");
    let call = Call::new(Kind::AllGather, 4);
    let m = Measure { trace: true, ..Measure::new(4) };
    let opts = CheckOptions { seeds: 1, ..CheckOptions::default() };
    let checked = measure::check(&cfg, &Builtin(&call), &m, 8192, 2, &opts).unwrap();
    assert!(checked.report.is_clean() && checked.report.runs == 2, "{:?}", checked.report);
    assert!(checked.timeline.is_some());
}
