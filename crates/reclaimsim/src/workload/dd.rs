//! `dd bs=4k if=FILE of=/dev/null` readers, as vm-scalability's `case-lru-file-readtwice`
//! starts them.

use super::phase::{RepeatPhase, Repeats};
use super::{check_count, FileSpec, Layout, Step, Touch, Workload};
use crate::units::{ByteSize, Duration, PAGE_SIZE};
use serde::Deserialize;

/// Sequential `dd bs=4k` readers: `readers` concurrent readers per file, each reading its
/// file from start to end once (readtwice: sparse files, `readers = 2`).
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct DdOptions {
    /// Number of files (vm-scalability's `nr_task`). Default 1.
    #[serde(default = "one")]
    pub files: u64,
    /// Size of each file.
    pub size: ByteSize,
    /// Concurrent readers of each file. Default 1 (readtwice uses 2).
    #[serde(default = "one")]
    pub readers: u64,
    /// Files are holes: reads zero-fill page-cache pages without device I/O. Default true.
    #[serde(default = "yes")]
    pub sparse: bool,
    /// Stop the readers early (vm-scalability's `runtime`). Default: read to end of file.
    pub runtime: Option<Duration>,
    /// Later phases: each reader reads its file again from the start
    /// (`[[workload.dd.phase]]`; a phase's `runtime` defaults to the end of the file).
    #[serde(default)]
    pub phase: Vec<RepeatPhase>,
}

fn one() -> u64 {
    1
}
fn yes() -> bool {
    true
}

/// The dd generator: threads `f * readers .. (f + 1) * readers` read file `f`.
pub struct Dd {
    pages: u64,
    files: usize,
    readers: usize,
    sparse: bool,
    repeats: Repeats,
    /// Next page of each reader.
    pos: Vec<u64>,
}

impl Dd {
    pub fn new(o: &DdOptions) -> Result<Self, String> {
        let files = check_count("dd.files", o.files)?;
        let readers = check_count("dd.readers", o.readers)?;
        check_count("dd.files × dd.readers", o.files * o.readers)?;
        if o.size.0 == 0 {
            return Err("dd.size: must be positive".into());
        }
        Ok(Dd {
            pages: o.size.pages(),
            files,
            readers,
            sparse: o.sparse,
            repeats: Repeats::new("dd", o.runtime, None, &o.phase, files * readers)?,
            pos: vec![0; files * readers],
        })
    }
}

impl Workload for Dd {
    fn layout(&self) -> Layout {
        Layout {
            files: vec![
                FileSpec {
                    pages: self.pages,
                    sparse: self.sparse
                };
                self.files
            ],
            processes: Vec::new(),
            thread_process: vec![None; self.pos.len()],
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
        let phase = match self.repeats.begin(thread, now_ns) {
            Ok((phase, fresh)) => {
                if fresh {
                    self.pos[thread] = 0;
                }
                phase
            }
            Err(step) => return step,
        };
        let index = self.pos[thread];
        if index == self.pages {
            return self.repeats.end(thread);
        }
        self.pos[thread] += 1;
        out.push(Touch::Read {
            file: (thread / self.readers) as u32,
            index,
        });
        Step::Op {
            phase,
            bytes: PAGE_SIZE as u32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readtwice_has_two_readers_per_file() {
        let o: DdOptions = toml::from_str("files=2\nsize='8k'\nreaders=2").unwrap();
        let mut w = Dd::new(&o).unwrap();
        let layout = w.layout();
        assert_eq!(
            layout.files,
            vec![
                FileSpec {
                    pages: 2,
                    sparse: true
                };
                2
            ]
        );
        assert_eq!(layout.threads(), 4);
        let mut out = Vec::new();
        for thread in [0, 1, 0, 1, 2, 3, 2, 3] {
            assert!(matches!(w.next(thread, 0, &mut out), Step::Op { .. }));
        }
        assert_eq!(
            out,
            [
                (0, 0),
                (0, 0),
                (0, 1),
                (0, 1),
                (1, 0),
                (1, 0),
                (1, 1),
                (1, 1)
            ]
            .map(|(file, index)| Touch::Read { file, index })
        );
        assert_eq!(w.next(0, 0, &mut out), Step::Done);
    }

    #[test]
    fn runtime_stops_early_and_counts_are_checked() {
        let o: DdOptions = toml::from_str("size='1g'\nruntime='1s'").unwrap();
        let mut w = Dd::new(&o).unwrap();
        assert!(matches!(w.next(0, 0, &mut Vec::new()), Step::Op { .. }));
        assert_eq!(w.next(0, 1_000_000_000, &mut Vec::new()), Step::Done);
        let o: DdOptions = toml::from_str("size='1g'\nreaders=0").unwrap();
        assert!(Dd::new(&o).err().unwrap().starts_with("dd.readers:"));
    }
}
