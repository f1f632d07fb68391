//! Runs every collective on the a2a3 preset (8 x Ascend 910B) with 1 MiB of f32 per rank and
//! prints, for each, the simulated time and the bytes each rank moved to and from its peers.
//!
//! `cargo run --release --example collectives`

use collectives::{AllGather, AllReduce, Kind, Mode, Path};
use ranksim::collectives;
use ranksim::prelude::*;

const ELEMS: usize = 256 * 1024; // 1 MiB of f32 per rank

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cfg = ranksim::Config::default_preset();
    let p = cfg.machine.ranks;
    println!("# {} ({} ranks), {} KiB of f32 per rank", cfg.machine.name, p, ELEMS * 4 / 1024);
    println!(
        "{:<15} {:<9} {:<7} {:>11}  remote bytes moved per rank (read + written), KiB",
        "collective", "mode", "path", "time"
    );
    let cases: Vec<(Kind, Mode, Path)> = vec![
        (Kind::AllReduce, Mode::Mesh, Path::Host),
        (Kind::AllReduce, Mode::Ring, Path::Host),
        (Kind::AllReduce, Mode::TwoShot, Path::Host),
        (Kind::AllReduce, Mode::AivMesh, Path::Host),
        (Kind::AllReduce, Mode::SdmaMesh, Path::Host),
        (Kind::AllReduce, Mode::Mesh, Path::InCore),
        (Kind::AllReduce, Mode::Ring, Path::InCore),
        (Kind::AllGather, Mode::Mesh, Path::Host),
        (Kind::AllGather, Mode::SdmaMesh, Path::Host),
        (Kind::ReduceScatter, Mode::Mesh, Path::Host),
        (Kind::Broadcast, Mode::Mesh, Path::Host),
        (Kind::AllToAll, Mode::Mesh, Path::Host),
        (Kind::AllToAllV, Mode::Mesh, Path::Host),
        (Kind::Barrier, Mode::Mesh, Path::Host),
    ];
    for (kind, mode, path) in cases {
        let mut w = cfg.world()?;
        let dom = w.world_domain("comm_d0")?;
        let multi = (kind == Kind::AllReduce && path == Path::Host && mode != Mode::Ring) || mode == Mode::SdmaMesh;
        let core_num = if multi { 8 } else { 1 };
        let sig =
            w.alloc_window(&dom, "signal", DType::I32, &collectives::signal_shape(kind, mode, path, p, core_num))?;
        let row = ELEMS / p;
        match kind {
            Kind::AllReduce => {
                let data = w.alloc_window(&dom, "data", DType::F32, &[ELEMS])?;
                collectives::allreduce(&mut w, &data, &sig, AllReduce { op: ReduceOp::Sum, mode, path, core_num })?;
            }
            Kind::AllGather => {
                let stage = w.alloc_window(&dom, "stage", DType::F32, &[1, row])?;
                let target = w.alloc_window(&dom, "target", DType::F32, &[p, row])?;
                collectives::allgather_with(&mut w, &stage, &target, &sig, AllGather { mode, path, core_num })?;
            }
            Kind::ReduceScatter => {
                let data = w.alloc_window(&dom, "data", DType::F32, &[p, row])?;
                collectives::reduce_scatter(&mut w, &data, &sig, ReduceOp::Sum, path)?;
            }
            Kind::Broadcast => {
                let data = w.alloc_window(&dom, "data", DType::F32, &[ELEMS])?;
                collectives::broadcast(&mut w, &data, &sig, 0, path)?;
            }
            Kind::AllToAll => {
                let input = w.alloc_window(&dom, "input", DType::F32, &[p, row])?;
                let target = w.alloc_window(&dom, "target", DType::F32, &[p, row])?;
                collectives::all_to_all(&mut w, &input, &target, &sig, path)?;
            }
            Kind::AllToAllV => {
                let input = w.alloc_window(&dom, "input", DType::F32, &[p * 4, row / 4])?;
                let target = w.alloc_window(&dom, "target", DType::F32, &[p * 4, row / 4])?;
                let send = w.alloc_window(&dom, "send_counts", DType::I32, &[p])?;
                let recv = w.alloc_window(&dom, "recv_counts", DType::I32, &[p, 1])?;
                for r in 0..p {
                    w.write(&send, r, &vec![4; p])?;
                }
                collectives::all_to_all_v(&mut w, &input, &target, &send, &recv, &sig, path)?;
            }
            Kind::Barrier => collectives::barrier(&mut w, &sig, path)?,
        }
        let report = w.run()?;
        let moved: Vec<String> =
            report.traffic.iter().map(|t| format!("{}", (t.remote_read_bytes + t.remote_write_bytes) / 1024)).collect();
        let t = report.dispatches.iter().map(|d| d.device_wall()).max().unwrap_or_default();
        println!(
            "{:<15} {:<9} {:<7} {:>11}  {}",
            kind.name(),
            mode.name(),
            path.name(),
            t.to_string(),
            moved.join(" ")
        );
    }
    Ok(())
}
