//! Setting a run up: the tasks (kswapd per node, each workload's threads and clients,
//! the `[[event]]` writes), their cpusets, the workloads' processes and files, the
//! policy, and the engine that holds them all (`Engine::new`).

use super::{
    cfs, clients, new_task, Engine, ExternalAgent, Kind, PhaseStats, SimError, State, Task, Wl,
    AUTO_FIRST_INTERVAL_NS,
};
use crate::kernel::control::Write;
use crate::kernel::kswapd::Kswapd;
use crate::kernel::lru::classic::Classic;
use crate::kernel::lru::mglru::Mglru;
use crate::kernel::lru::plugin::{examples, Plugin, PluginFactory};
use crate::kernel::lru::Policy;
use crate::kernel::memcg::MemcgId;
use crate::kernel::mm::{Mm, VmaKind};
use crate::kernel::pagecache::File;
use crate::kernel::Kernel;
use crate::scenario::config::{PolicyKind, Scenario};
use crate::scenario::event::EventWrite;
use crate::sim::cost::CostTable;
use crate::workload::{RegionSpec, Workload, WorkloadOptions};
use std::collections::BTreeSet;

/// One kswapd task per node: a kernel thread allowed on its node's CPUs (kswapd()'s
/// set_cpus_allowed_ptr to cpumask_of_node, 6.1), on every CPU for a node without CPUs
/// (kswapd() leaves an empty mask alone), or pinned to `kernel.kswapd_cpu`.
pub(super) fn kswapd_tasks(
    k: &Kernel,
    s: &Scenario,
    cpusets: &mut Vec<Vec<u32>>,
) -> (Vec<Task>, Vec<Kswapd>) {
    let mut tasks = Vec::new();
    let mut kswapd = Vec::new();
    for node in 0..k.nr_nodes() {
        let set = match &s.kernel.kswapd_cpu {
            Some(v) => vec![v[node]],
            None => {
                let all = 0..k.topology.nr_cpus();
                let set: Vec<u32> = (all.clone())
                    .filter(|&c| k.cpu_node[c as usize] as usize == node)
                    .collect();
                if set.is_empty() {
                    all.collect()
                } else {
                    set
                }
            }
        };
        tasks.push(new_task(
            cpusets,
            set,
            Kind::Kswapd { node },
            State::Waiting,
        ));
        kswapd.push(Kswapd::new(node));
    }
    (tasks, kswapd)
}

/// A workload's own CPU time per operation, apart from what the kernel charges for it.
fn op_cost(opts: &WorkloadOptions, costs: &CostTable) -> u64 {
    match opts {
        WorkloadOptions::Fio(o) => o.ioengine.op_cost(costs),
        WorkloadOptions::Memcached(_) => costs.memcached_request,
        // dd's write of the block to /dev/null; its read is filemap_read's.
        WorkloadOptions::Dd(_) => costs.dd_block,
        // Their per-operation work is in their own steps.
        WorkloadOptions::PageFault3(_)
        | WorkloadOptions::Anon(_)
        | WorkloadOptions::Tabs(_)
        | WorkloadOptions::Trace(_) => 0,
    }
}

/// Workload `wi`: its generator, files, processes and threads (appended to `tasks`).
pub(super) fn setup_workload(
    k: &mut Kernel,
    s: &Scenario,
    wi: usize,
    tasks: &mut Vec<Task>,
    cpusets: &mut Vec<Vec<u32>>,
) -> Result<Wl, SimError> {
    let wc = &s.workloads[wi];
    let setup = |e: String| SimError::Setup(format!("workload {}: {e}", wc.name));
    let opts = wc.options().map_err(setup)?;
    let seed = s.seed ^ (0x5851_F42D_4C95_7F2D_u64.wrapping_mul(wi as u64 + 1));
    let mut gen = opts.build(seed).map_err(setup)?;
    let op_cost = op_cost(&opts, &s.costs);
    let memcg =
        (k.memcgs.by_path(&wc.memcg)).ok_or_else(|| setup(format!("no memcg {}", wc.memcg)))?;
    let layout = gen.layout();
    let file_base = k.files.len() as u32;
    for f in &layout.files {
        k.files.push(File::new(f.pages, f.sparse));
    }
    let mms = create_processes(k, gen.as_ref(), memcg, file_base, wc).map_err(setup)?;
    let mut tids = Vec::new();
    for t in 0..layout.threads() {
        tids.push(tasks.len());
        let set = match wc.pinned_cpu(t, &k.topology) {
            Some(cpu) => vec![cpu],
            None => wc.cpuset(&k.topology),
        };
        let kind = Kind::Thread { w: wi, t };
        tasks.push(new_task(cpusets, set, kind, State::Waiting));
    }
    let clients = match (&opts, &wc.client_cpus) {
        (WorkloadOptions::Memcached(_), Some(set)) => {
            clients::client_tasks(wi, gen.as_mut(), tids.len(), set, tasks, cpusets)
        }
        _ => clients::Clients::default(),
    };
    let phases = gen.phases();
    Ok(Wl {
        name: wc.name.clone(),
        thread_mm: (layout.thread_process.iter())
            .map(|p| p.map(|i| mms[i]))
            .collect(),
        gen,
        memcg,
        op_cost,
        file_base,
        mms,
        mems: wc.mems_mask(),
        batch_ops: vec![0; tids.len()],
        tasks: tids,
        clients,
        stats: phases.iter().map(|_| PhaseStats::default()).collect(),
        phases,
        barriers: 0,
        start_ns: 0,
        started: false,
        done: false,
        cfg: wc.clone(),
    })
}

/// The processes of a workload's layout, each with its VMAs (a file VMA joins its
/// file's i_mmap), in `memcg` unless the workload places it elsewhere, with the
/// workload's `page_content` and `mems`. Gives their mm ids.
pub(super) fn create_processes(
    k: &mut Kernel,
    gen: &dyn Workload,
    memcg: MemcgId,
    file_base: u32,
    wc: &crate::scenario::config::WorkloadConfig,
) -> Result<Vec<u32>, String> {
    let (content, mems) = (wc.page_content.unwrap_or_default(), wc.mems_mask());
    let mut mms = Vec::new();
    for (pi, proc_) in gen.layout().processes.iter().enumerate() {
        let id = k.mms.len() as u32;
        let memcg = match gen.process_memcg(pi) {
            None => memcg,
            Some(path) => k
                .memcgs
                .by_path(path)
                .ok_or_else(|| format!("no memcg {path}"))?,
        };
        let mut mm = Mm {
            memcg,
            content,
            mems,
            ..Default::default()
        };
        for r in &proc_.regions {
            let v = match *r {
                RegionSpec::Anon { pages } => mm.add_vma(pages, VmaKind::Anon),
                RegionSpec::File { file } => {
                    let fid = file_base + file as u32;
                    let pages = k.files[fid as usize].pages;
                    let v = mm.add_vma(pages, VmaKind::File { file: fid });
                    k.files[fid as usize].mappings.push((id, v as u32));
                    v
                }
            };
            debug_assert_eq!(v, mm.vmas.len() - 1);
        }
        k.mms.push(mm);
        mms.push(id);
    }
    Ok(mms)
}

/// The scenario's `[[event]]`s, each a task (appended to `tasks`) at its time, with the
/// command as shown in the results and the write the kernel runs.
pub(super) fn event_tasks(
    k: &Kernel,
    s: &Scenario,
    tasks: &mut Vec<Task>,
    cpusets: &mut Vec<Vec<u32>>,
) -> Result<Vec<(String, Write)>, SimError> {
    let mut events = Vec::new();
    for (i, ev) in s.events.iter().enumerate() {
        let parsed = crate::scenario::event::parse(ev)
            .map_err(|(f, e)| SimError::Setup(format!("event[{i}].{f}: {e}")))?;
        let (node, write) = match parsed.write {
            EventWrite::LruGen(cmds) => (cmds[0].node as usize, Write::LruGen(cmds)),
            EventWrite::Memcg { path, file } => {
                let m = k.memcgs.by_path(&path).ok_or_else(|| {
                    SimError::Setup(format!("event[{i}].memcg: no memcg \"{path}\""))
                })?;
                (0, Write::Memcg(m, file))
            }
            EventWrite::Sysctl(sysctl) => (0, Write::Sysctl(sysctl)),
        };
        // kswapd tasks are the first ids, one per node: a write runs where its node's
        // kswapd may (node 0's for a file or sysctl).
        let node = node.min(k.nr_nodes() - 1);
        let set = match ev.cpu {
            Some(cpu) => vec![cpu],
            None => cpusets[tasks[node].cpuset as usize].clone(),
        };
        let mut task = new_task(cpusets, set, Kind::Event { e: i }, State::Runnable);
        task.clock = ev.at.0;
        tasks.push(task);
        events.push((parsed.shown, write));
    }
    Ok(events)
}

/// The scenario's `kernel.policy`; a plugin whose `init` failed fails the run.
/// What slows a CPU's work: its busy SMT siblings and, on a little core, its lower
/// speed (`Sched::set_smt`, `Sched::set_little`).
fn set_cpu_speeds(k: &mut Kernel) {
    let cpus = k.topology.nr_cpus();
    let siblings = (0..cpus)
        .map(|c| k.topology.siblings(c).collect())
        .collect();
    (k.sched).set_smt(siblings, k.costs.smt_compute, k.costs.smt_memory);
    let little = (0..cpus).map(|c| k.topology.is_little(c)).collect();
    (k.sched).set_little(little, k.costs.little_compute, k.costs.little_memory);
}

pub(super) fn new_policy(
    k: &mut Kernel,
    s: &Scenario,
    plugin: Option<PluginFactory>,
) -> Result<Box<dyn Policy>, SimError> {
    let mut p: Box<dyn Policy> = match s.kernel.policy {
        PolicyKind::Classic => Box::new(Classic::new(k)),
        PolicyKind::Mglru => Box::new(Mglru::with_seed(k, s.seed)),
        PolicyKind::Plugin => Box::new(new_plugin(k, s, plugin)?),
    };
    match p.failure() {
        Some(why) => Err(SimError::Policy(why)),
        None => Ok(p),
    }
}

/// The plugin policy of `kernel.plugin`: an example by name, or "python" from
/// `RunOptions::plugin`.
pub(super) fn new_plugin(
    k: &mut Kernel,
    s: &Scenario,
    external: Option<PluginFactory>,
) -> Result<Plugin, SimError> {
    let cfg =
        s.kernel.plugin.as_ref().ok_or_else(|| {
            SimError::Setup("kernel.policy = \"plugin\" needs kernel.plugin".into())
        })?;
    let memcg =
        match &cfg.memcg {
            Some(path) => Some(k.memcgs.by_path(path).ok_or_else(|| {
                SimError::Setup(format!("kernel.plugin.memcg: no memcg \"{path}\""))
            })?),
            None => None,
        };
    let make = match (examples::by_name(&cfg.name), external) {
        (Some(f), _) => f,
        (None, Some(f)) if cfg.name == "python" => f,
        _ => {
            return Err(SimError::Setup(format!(
                "kernel.plugin.name \"{}\": a Python policy runs only from the Python package (reclaimsim.run(path, policy=MyPolicy))",
                cfg.name
            )))
        }
    };
    Ok(Plugin::new(k, &cfg.name, memcg, cfg.pages, make))
}

impl Engine {
    pub(super) fn new(
        s: &Scenario,
        external: Option<ExternalAgent>,
        plugin: Option<PluginFactory>,
    ) -> Result<Self, SimError> {
        let mut k = Kernel::new(&s.kernel_setup());
        let p = new_policy(&mut k, s, plugin)?;
        let cpus = k.topology.nr_cpus();
        let mut cpusets = Vec::new();
        let (mut tasks, kswapd) = kswapd_tasks(&k, s, &mut cpusets);
        let wls = (0..s.workloads.len())
            .map(|wi| setup_workload(&mut k, s, wi, &mut tasks, &mut cpusets))
            .collect::<Result<Vec<_>, _>>()?;
        let events = event_tasks(&k, s, &mut tasks, &mut cpusets)?;
        set_cpu_speeds(&mut k);
        let run_queues = vec![cfs::Cpu::new(&k.topology); cpus as usize];
        let mut e = Engine {
            k,
            p,
            kswapd,
            tasks,
            wls,
            cpus: run_queues,
            cpusets,
            tunables: cfs::Tunables::for_cpus(cpus),
            nohz_next: 0,
            end_ns: s.duration.map(|d| d.0),
            capped: false,
            steps: 0,
            samples: Vec::new(),
            sample_every: s
                .sample_interval
                .map_or(AUTO_FIRST_INTERVAL_NS, |d| d.0.max(1)),
            sample_auto: s.sample_interval.is_none(),
            next_sample: 0,
            accesses: 0,
            events,
            event_results: Vec::new(),
            agents: Vec::new(),
            failure: None,
            finished: BTreeSet::new(),
            flusher: usize::MAX,
            flusher_end: 0,
            _pin: std::marker::PhantomPinned,
        };
        e.add_flusher(s);
        e.add_agents(s)?;
        if let Some(x) = external {
            e.add_external(x);
        }
        e.add_kworkers();
        e.psi_tasks();
        e.k.profiles = vec![Default::default(); e.tasks.len()];
        e.draw_phases(s);
        for id in 0..e.tasks.len() {
            if let Kind::Event { .. } | Kind::Agent { .. } = e.tasks[id].kind {
                let at = e.tasks[id].clock;
                e.schedule(id, at);
            }
        }
        for wi in 0..e.wls.len() {
            if e.wls[wi].cfg.after.is_none() {
                let t = e.wls[wi].cfg.start.0;
                e.start_workload(wi, t);
            }
        }
        Ok(e)
    }
}
