//! Every built-in tutorial program matches its golden on the default preset.

use ranksim::Config;
use ranksim::programs::PROGRAMS;
use ranksim::sim_core::SimError;

#[test]
fn tutorial_programs_match_their_goldens() {
    for p in PROGRAMS.iter().filter(|p| p.name != "deadlock") {
        for ranks in [2, 3, 4, 8] {
            let mut world = Config::default_preset().world().unwrap();
            let out = (p.run)(&mut world, ranks).unwrap_or_else(|e| panic!("{} at P={ranks}: {e}", p.name));
            assert!(out.ok, "{} at P={ranks}: {}", p.name, out.detail);
            println!("{} P={ranks}: {} end={}", p.name, out.detail, out.report.end);
        }
    }
}

#[test]
fn the_deadlock_program_reports_every_blocked_wait() {
    let mut world = Config::default_preset().world().unwrap();
    let err = (ranksim::programs::find("deadlock").unwrap().run)(&mut world, 4).unwrap_err();
    let SimError::Deadlock(report) = &err else { panic!("expected a deadlock, got {err}") };
    assert_eq!(report.waits.len(), 4);
    println!("{err}");
}
