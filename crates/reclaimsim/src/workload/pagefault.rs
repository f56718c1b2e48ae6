//! will-it-scale's `page_fault3`: shared file mappings written one byte per page, then
//! unmapped, in a loop.

use super::phase::{RepeatPhase, Repeats};
use super::{check_count, FileSpec, Layout, ProcessSpec, RegionSpec, Step, Touch, Workload};
use crate::units::{ByteSize, Duration};
use serde::Deserialize;

/// will-it-scale `page_fault3` tasks: each task has its own unlinked, ftruncated (hole)
/// file, and loops `mmap(MAP_SHARED)`, write one byte per page, `munmap`. An iteration is
/// one page written.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct PageFault3Options {
    /// Number of tasks (`-t`). Default 1.
    #[serde(default = "one")]
    pub tasks: u64,
    /// Mapping (and file) size of each task. Default 128MiB (the test's `MEMSIZE`).
    #[serde(default = "memsize")]
    pub size: ByteSize,
    /// How long the tasks loop.
    pub runtime: Duration,
    /// `process` (each task its own address space, will-it-scale's `_processes`) or
    /// `thread` (all tasks in one address space, `_threads`). Default `process`.
    #[serde(default = "process")]
    pub mode: String,
    /// Later phases: the tasks stop, holding their mappings, and loop on from where they
    /// were (`[[workload.page_fault3.phase]]`; a phase's `runtime` defaults to the
    /// workload's).
    #[serde(default)]
    pub phase: Vec<RepeatPhase>,
}

fn one() -> u64 {
    1
}
fn memsize() -> ByteSize {
    ByteSize(128 << 20)
}
fn process() -> String {
    "process".into()
}

/// The page_fault3 generator: task `t` maps file `t`.
pub struct PageFault3 {
    pages: u64,
    threads_mode: bool,
    repeats: Repeats,
    /// Next page of each task in the current pass.
    pos: Vec<u64>,
}

impl PageFault3 {
    pub fn new(o: &PageFault3Options) -> Result<Self, String> {
        let tasks = check_count("page_fault3.tasks", o.tasks)?;
        if o.size.0 == 0 {
            return Err("page_fault3.size: must be positive".into());
        }
        let threads_mode = match o.mode.as_str() {
            "process" => false,
            "thread" => true,
            m => return Err(format!("page_fault3.mode: `{m}` is not process or thread")),
        };
        Ok(PageFault3 {
            pages: o.size.pages(),
            threads_mode,
            repeats: Repeats::new(
                "page_fault3",
                Some(o.runtime),
                Some(o.runtime),
                &o.phase,
                tasks,
            )?,
            pos: vec![0; tasks],
        })
    }

    /// The region task `task` maps, in its process.
    fn region(&self, task: usize) -> u32 {
        if self.threads_mode {
            task as u32
        } else {
            0
        }
    }
}

impl Workload for PageFault3 {
    /// The files are holes, as `ftruncate` leaves them: first touches allocate zeroed
    /// page-cache pages without reading the device.
    fn layout(&self) -> Layout {
        let tasks = self.pos.len();
        let files = vec![
            FileSpec {
                pages: self.pages,
                sparse: true
            };
            tasks
        ];
        let (processes, thread_process) = if self.threads_mode {
            let regions = (0..tasks).map(|file| RegionSpec::File { file }).collect();
            (vec![ProcessSpec { regions }], vec![Some(0); tasks])
        } else {
            let processes = (0..tasks)
                .map(|file| ProcessSpec {
                    regions: vec![RegionSpec::File { file }],
                })
                .collect();
            (processes, (0..tasks).map(Some).collect())
        };
        Layout {
            files,
            processes,
            thread_process,
        }
    }

    fn phases(&self) -> Vec<String> {
        self.repeats.names()
    }

    fn measured(&self, _phase: u8, _now_ns: u64) -> bool {
        true
    }

    fn waits_for(&self, phase: usize) -> Option<&str> {
        self.repeats.waits_for(phase)
    }

    fn next(&mut self, thread: usize, now_ns: u64, out: &mut Vec<Touch>) -> Step {
        // A task in a later phase goes on with its loop where it stopped, as a stopped
        // and continued process does.
        let phase = match self.repeats.begin(thread, now_ns) {
            Ok((phase, _)) => phase,
            Err(step) => return step,
        };
        let region = self.region(thread);
        let page = self.pos[thread];
        out.push(Touch::Mem {
            region,
            page,
            write: true,
        });
        if page + 1 == self.pages {
            out.push(Touch::Unmap { region });
            self.pos[thread] = 0;
        } else {
            self.pos[thread] += 1;
        }
        Step::Op { phase, bytes: 1 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(text: &str) -> PageFault3 {
        PageFault3::new(&toml::from_str(text).unwrap()).unwrap()
    }

    #[test]
    fn writes_every_page_then_unmaps() {
        let mut w = build("size='12k'\nruntime=1");
        let mut out = Vec::new();
        for _ in 0..4 {
            w.next(0, 0, &mut out);
        }
        let mem = |page| Touch::Mem {
            region: 0,
            page,
            write: true,
        };
        assert_eq!(
            out,
            [mem(0), mem(1), mem(2), Touch::Unmap { region: 0 }, mem(0)]
        );
        assert_eq!(w.next(0, 1_000_000_000, &mut out), Step::Done);
    }

    #[test]
    fn thread_mode_shares_one_process() {
        let w = build("tasks=3\nruntime=1\nmode='thread'");
        let layout = w.layout();
        assert_eq!(layout.processes.len(), 1);
        assert_eq!(layout.processes[0].regions.len(), 3);
        assert_eq!(w.region(2), 2);
        let w = build("tasks=3\nruntime=1");
        assert_eq!(w.layout().thread_process, vec![Some(0), Some(1), Some(2)]);
        assert_eq!(w.layout().files[0].pages, 32768);
    }
}
