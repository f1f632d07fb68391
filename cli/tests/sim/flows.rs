//! Concurrent point-to-point flows on any machine, for the closed-form and property tests of
//! the timing model: each flow is a put by its own core followed by a notify, and a core of the
//! destination records when the notify woke it.

use parking_lot::Mutex;
use ranksim::Config;
use ranksim::prelude::*;
use std::sync::Arc;

/// One put of `bytes` from rank `src` into rank `dst`, issued after `delay` core cycles.
#[derive(Clone, Debug)]
pub struct Flow {
    pub src: usize,
    pub dst: usize,
    pub bytes: usize,
    pub delay: u64,
}

impl Flow {
    /// A flow issued at time 0.
    pub fn new(src: usize, dst: usize, bytes: usize) -> Flow {
        Flow { src, dst, bytes, delay: 0 }
    }
}

/// What a core of a rank does in [`land_times`].
#[derive(Copy, Clone, Debug)]
enum Role {
    Send(usize),
    Receive(usize),
}

/// The roles of rank `r`: one core per outgoing flow, then one per incoming flow.
fn roles(flows: &[Flow], r: usize) -> Vec<Role> {
    let send = flows.iter().enumerate().filter(|(_, f)| f.src == r).map(|(i, _)| Role::Send(i));
    let recv = flows.iter().enumerate().filter(|(_, f)| f.dst == r).map(|(i, _)| Role::Receive(i));
    send.chain(recv).collect()
}

/// Runs `flows` at once on the machine of `toml` (bytes must be multiples of 4) and returns,
/// per flow, the instant in ps its receiver woke: the payload landed and the 4-byte notify sent
/// after it on the same path landed too.
pub fn land_times(toml: &str, flows: &[Flow]) -> Vec<u64> {
    let mut w = Config::from_toml(toml, "flows").unwrap().world().unwrap();
    let dom = w.world_domain("comm_d0").unwrap();
    let cols = flows.iter().map(|f| f.bytes / 4).max().unwrap_or(1).max(1);
    let data = w.alloc_window(&dom, "data", DType::F32, &[flows.len(), cols]).unwrap();
    let sig = w.alloc_window(&dom, "signal", DType::I32, &[flows.len(), 1]).unwrap();
    let log: Arc<Mutex<Vec<u64>>> = Arc::new(Mutex::new(vec![0; flows.len()]));
    for r in 0..w.size() {
        let roles = roles(flows, r);
        if roles.is_empty() {
            continue;
        }
        let (flows, data, sig, log) = (flows.to_vec(), data.clone(), sig.clone(), log.clone());
        let kernel = Dispatch::kernel("flows", roles.len(), move |core| match roles[core.block_idx()] {
            Role::Send(i) => {
                let f = &flows[i];
                core.compute(f.delay);
                let opts = CopyOpts::new().region(&[i, 0], &[i, 0], &[1, f.bytes / 4]);
                core.put(&data, f.dst, &data, &opts)?;
                core.notify(&sig, f.dst, &[i, 0], 1, NotifyOp::AtomicAdd)
            }
            Role::Receive(i) => {
                core.wait(&sig, &[i, 0], 1, WaitCmp::Ge)?;
                log.lock()[i] = core.now().as_ps();
                Ok(())
            }
        });
        w.dispatch(r, kernel.in_domain(&dom)).unwrap();
    }
    w.run().unwrap();
    log.lock().clone()
}

/// A machine where only the links cost time: the simple machine (`common::simple_toml`) with
/// unlimited DMA engines, free notifies and vector start-up, 48 AIV cores, 64 MiB of UB and
/// `packet_bytes`-byte packets. `topology` is the body of `[fabric.topology]`.
pub fn links_only(ranks: usize, packet_bytes: u64, topology: &str) -> String {
    let simple = crate::common::simple_toml(ranks);
    let (machine, _) = simple.split_once("[fabric.topology]").unwrap_or((&simple, ""));
    let machine = machine
        .replace("aiv_cores = 4", "aiv_cores = 48")
        .replace("ub_bytes = 65536", "ub_bytes = 67108864")
        .replace("notify_issue_ns = 10.0", "notify_issue_ns = 0.0")
        .replace("gbps = 100.0", "gbps = inf")
        .replace("fixed_cycles = 10", "fixed_cycles = 0")
        .replace("packet_bytes = 4096", &format!("packet_bytes = {packet_bytes}"));
    format!("{machine}[fabric.topology]\n{topology}")
}
