//! Every preset in configs/ loads, is embedded in the binary, builds a world of its rank count
//! and runs a collective end to end with the right result.

use collectives::{AllReduce, Kind, Mode, Path};
use ranksim::Config;
use ranksim::collectives;
use ranksim::prelude::*;

#[test]
fn every_preset_file_is_embedded_and_runs_an_allreduce() {
    let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("configs");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| Some(e.ok()?.path()).filter(|p| p.extension().is_some_and(|x| x == "toml")))
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    files.sort();
    let mut embedded: Vec<String> = ranksim::config::PRESETS.iter().map(|p| p.0.to_string()).collect();
    embedded.sort();
    assert_eq!(files, embedded, "every configs/*.toml is embedded, and nothing else");
    for name in files {
        let from_file = Config::load(&dir.join(format!("{name}.toml"))).unwrap();
        let cfg = Config::preset(&name).unwrap();
        assert_eq!(cfg, from_file);
        let mut w = cfg.world().unwrap();
        let n = w.size();
        let dom = w.world_domain("comm_d0").unwrap();
        let data = w.alloc_window(&dom, "data", DType::F32, &[1000]).unwrap();
        // Above kMaxSupportedRanks PyPTO's builtins do nothing; the vendor library runs RHD.
        let mode = if n > collectives::MAX_BUILTIN_RANKS { Mode::Rhd } else { Mode::TwoShot };
        let sig = w
            .alloc_window(&dom, "sig", DType::I32, &collectives::signal_shape(Kind::AllReduce, mode, Path::Host, n, 4))
            .unwrap();
        for r in 0..n {
            w.write(&data, r, &vec![r as f32; 1000]).unwrap();
        }
        collectives::allreduce(&mut w, &data, &sig, AllReduce { mode, core_num: 4, ..AllReduce::default() }).unwrap();
        let report = w.run().unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = (n * (n - 1) / 2) as f32;
        assert_eq!(w.read::<f32>(&data, n - 1).unwrap(), vec![want; 1000], "{name}");
        assert!(report.end > SimTime::ZERO);
    }
}
