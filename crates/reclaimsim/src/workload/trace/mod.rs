//! Trace replay: the requests of a recorded trace as page touches.
//!
//! A first streaming pass (`Scan`) checks the whole trace and gives every object, file
//! page and anonymous page a dense page number in order of first appearance; the replay
//! reads the trace again, one buffered record at a time. Memory grows with the distinct
//! objects (pages) and tenants, never with the trace's length.
//!
//! Objects are pages of one file read with read(2) (a page cache in front of a device);
//! an object of S bytes covers ceil(S / 4096) pages, given at its first request. A tenant
//! is a thread with a process of its own (its anonymous memory) in the memcg `tenants`
//! maps it to; files are shared, their pages charged to the tenant that reads them first.

pub mod format;
mod idmap;
#[cfg(test)]
mod tests;

use super::{Layout, ProcessSpec, RegionSpec, Step, Touch, Workload};
use crate::units::{Duration, PAGE_SIZE};
use format::{Columns, Format, Reader, Record, Target, TraceError};
use idmap::IdMap;
use rustc_hash::FxHashMap;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// `[workload.trace]`: replay a recorded trace.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct TraceOptions {
    /// The trace file; a relative path is relative to the scenario file.
    pub path: PathBuf,
    /// `oracleGeneral`, `csv`, `txt` or `page`; default from the file's name.
    pub format: Option<String>,
    /// `fast` (default): each request as soon as the thread is free; `trace`: at the
    /// trace's time, as `time_unit` scales it.
    #[serde(default)]
    pub timing: Timing,
    /// The virtual time of one unit of the trace's time. Default 1s (1ns for `page`).
    pub time_unit: Option<Duration>,
    /// Every object is one page, whatever its size (libCacheSim's `ignore_obj_size`).
    #[serde(default)]
    pub ignore_obj_size: bool,
    /// Tenant (as the trace writes it) to memcg path; every tenant must be listed.
    /// Without it, the whole trace is one thread in the workload's memcg.
    #[serde(default)]
    pub tenants: BTreeMap<String, String>,
    /// csv only, libCacheSim's options: 1-based columns, the delimiter, and whether the
    /// first line is a header (default true; a header naming `time`, `obj_id`,
    /// `obj_size`, `tenant` needs no column options).
    pub obj_id_col: Option<usize>,
    pub time_col: Option<usize>,
    pub obj_size_col: Option<usize>,
    pub tenant_col: Option<usize>,
    pub delimiter: Option<char>,
    pub has_header: Option<bool>,
    /// The first pass, done once for this value and its clones (a scenario builds its
    /// workloads to check them and again to run them).
    #[serde(skip)]
    scan: Arc<OnceLock<Result<Arc<Scan>, String>>>,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Timing {
    #[default]
    Fast,
    Trace,
}

/// The options checked and resolved.
#[derive(Debug, Clone)]
struct Spec {
    path: PathBuf,
    format: Format,
    cols: Columns,
    timing: Timing,
    unit_ns: f64,
    ignore_obj_size: bool,
    /// Tenant to thread, from `tenants` (empty: one thread for the whole trace).
    tenant_thread: HashMap<Vec<u8>, u32>,
}

impl TraceOptions {
    fn spec(&self) -> Result<Spec, String> {
        let format = match &self.format {
            Some(f) => Format::parse(f).map_err(|e| format!("trace.format: {e}"))?,
            None => Format::from_name(&self.path).ok_or_else(|| {
                format!(
                    "trace.format: cannot tell the format of {} from its name; set format",
                    self.path.display()
                )
            })?,
        };
        let cols = self.columns(format)?;
        if self.timing == Timing::Trace && !format.has_time(&cols) {
            return Err("trace.timing: \"trace\" needs a trace with a time column".into());
        }
        let unit = match (self.time_unit, format) {
            (Some(Duration(0)), _) => return Err("trace.time_unit: must be positive".into()),
            (Some(u), _) => u.0,
            (None, Format::Page) => 1,
            (None, _) => 1_000_000_000,
        };
        Ok(Spec {
            path: self.path.clone(),
            format,
            cols,
            timing: self.timing,
            unit_ns: unit as f64,
            ignore_obj_size: self.ignore_obj_size,
            tenant_thread: self
                .tenants
                .keys()
                .zip(0..)
                .map(|(k, t)| (k.as_bytes().to_vec(), t))
                .collect(),
        })
    }

    /// The csv options as `Columns` (0-based); an error when given for another format.
    fn columns(&self, format: Format) -> Result<Columns, String> {
        let given = [
            ("obj_id_col", self.obj_id_col),
            ("time_col", self.time_col),
            ("obj_size_col", self.obj_size_col),
            ("tenant_col", self.tenant_col),
        ];
        let csv_only = given.iter().any(|(_, c)| c.is_some())
            || self.delimiter.is_some()
            || self.has_header.is_some();
        if format != Format::Csv && csv_only {
            return Err("trace: obj_id_col, time_col, obj_size_col, tenant_col, delimiter and has_header are csv options".into());
        }
        if let Some((name, _)) = given.iter().find(|(_, c)| *c == Some(0)) {
            return Err(format!("trace.{name}: columns count from 1"));
        }
        let delimiter = self.delimiter.unwrap_or(',');
        if !delimiter.is_ascii() {
            return Err(format!(
                "trace.delimiter: '{delimiter}' is not one ASCII character"
            ));
        }
        let has_header = self.has_header.unwrap_or(true);
        Ok(Columns {
            obj_id: self.obj_id_col.map(|c| c - 1),
            time: self.time_col.map(|c| c - 1),
            obj_size: self.obj_size_col.map(|c| c - 1),
            tenant: self.tenant_col.map(|c| c - 1),
            delimiter: delimiter as u8,
            has_header,
        })
    }

    /// The first pass over the trace (done once; see `scan`).
    fn scanned(&self) -> Result<Arc<Scan>, String> {
        let spec = self.spec()?;
        let scan = self
            .scan
            .get_or_init(|| Scan::run(&spec).map(Arc::new).map_err(|e| e.to_string()))
            .clone()?;
        debug_assert_eq!(
            scan.spec.path, spec.path,
            "options changed after their first pass"
        );
        Ok(scan)
    }

    /// What the first pass found, for sizing a run (`reclaimsim trace`).
    pub fn summary(&self) -> Result<Summary, String> {
        let scan = self.scanned()?;
        Ok(Summary {
            requests: scan.requests,
            file_pages: scan.file_pages.iter().sum(),
            anon_pages: scan.anon_pages.iter().sum(),
        })
    }
}

/// The size of a trace's replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Requests replayed (those of size 0 are skipped, as libCacheSim's readers do).
    pub requests: u64,
    /// Distinct pages of objects and files, and of anonymous memory.
    pub file_pages: u64,
    pub anon_pages: u64,
}

/// Pages a record's key was given: the first, and how many.
#[derive(Debug, Clone, Copy)]
struct Range {
    first: u64,
    pages: u64,
}

/// Most pages of one object: a `Range` packs into 64 bits (the first page in 40, the
/// count in 24), so the object maps stay small and cache-friendly.
const MAX_OBJECT_PAGES: u64 = (1 << 24) - 1;

impl Range {
    fn pack(self) -> u64 {
        debug_assert!(self.pages <= MAX_OBJECT_PAGES && self.first < 1 << 40);
        self.first << 24 | self.pages
    }

    fn unpack(v: u64) -> Range {
        Range {
            first: v >> 24,
            pages: v & MAX_OBJECT_PAGES,
        }
    }
}

/// What a record touches, before its pages are known.
#[derive(Debug, Clone, Copy)]
enum Key {
    /// Page `page` of the anonymous memory of tenant `tenant` (index into `Scan::tenants`).
    Anon { tenant: u32, page: u64 },
    /// Object `id` of the objects' file, or page `id` of a named file.
    File { file: u32, id: u64 },
}

impl Key {
    /// The key within its space.
    fn id(self) -> u64 {
        match self {
            Key::Anon { page, .. } => page,
            Key::File { id, .. } => id,
        }
    }
}

/// A resolved record: the thread that replays it, its key, its size in pages.
struct Loc {
    thread: usize,
    key: Key,
    pages: u64,
    write: bool,
    time: f64,
}

/// What the first pass learns.
#[derive(Debug)]
struct Scan {
    spec: Spec,
    requests: u64,
    first_time: f64,
    /// Interned tenants and the thread of each, for records that need a tenant
    /// (`needs_tenant`).
    tenants: FxHashMap<Vec<u8>, u32>,
    tenant_thread: Vec<u32>,
    /// The file of the objects, and the interned names of the other files.
    objects: Option<u32>,
    files: FxHashMap<Vec<u8>, u32>,
    file_pages: Vec<u64>,
    /// Per key space (a file, a tenant's anonymous memory), its ids' packed `Range`s.
    file_ids: Vec<IdMap>,
    /// Per thread, the pages of its process's anonymous region; per tenant, its ids.
    anon_pages: Vec<u64>,
    anon_ids: Vec<IdMap>,
}

type Bad = (&'static str, String);

impl Scan {
    fn run(spec: &Spec) -> Result<Scan, TraceError> {
        let threads = spec.tenant_thread.len().max(1);
        let mut scan = Scan {
            spec: spec.clone(),
            requests: 0,
            first_time: 0.0,
            tenants: FxHashMap::default(),
            tenant_thread: Vec::new(),
            objects: None,
            files: FxHashMap::default(),
            file_pages: Vec::new(),
            file_ids: Vec::new(),
            anon_pages: vec![0; threads],
            anon_ids: Vec::new(),
        };
        let mut reader = Reader::open(&spec.path, spec.format, &spec.cols)?;
        let mut last = 0.0;
        let mut batch = Vec::with_capacity(BATCH);
        loop {
            let (line, added) = match reader.read()? {
                None => break,
                Some(rec) => (rec.line, scan.add(&rec, &mut last)),
            };
            if let Some(loc) = added.map_err(|(field, m)| reader.error(line, field, m))? {
                batch.push(loc);
            }
            if batch.len() == BATCH {
                scan.assign(&mut batch);
            }
        }
        scan.assign(&mut batch);
        if scan.requests == 0 {
            return Err(reader.error(None, "", "no requests".into()));
        }
        Ok(scan)
    }

    /// Whether a record's tenant matters: for its thread, or for whose memory it touches.
    fn needs_tenant(&self, rec: &Record) -> bool {
        !self.spec.tenant_thread.is_empty() || matches!(rec.target, Target::Anon { .. })
    }

    /// Interns the record's tenant and file and checks its time; what it touches is
    /// for `assign` to give pages (`None`: nothing, a request of size 0).
    fn add(&mut self, rec: &Record, last: &mut f64) -> Result<Option<Loc>, Bad> {
        if self.needs_tenant(rec) && !self.tenants.contains_key(rec.tenant) {
            let thread = match self.spec.tenant_thread.get(rec.tenant) {
                Some(&t) => t,
                None if self.spec.tenant_thread.is_empty() => 0,
                None => return Err(("tenant", self.unknown_tenant(rec.tenant))),
            };
            let id = self.tenant_thread.len() as u32;
            self.tenants.insert(rec.tenant.to_vec(), id);
            self.tenant_thread.push(thread);
            self.anon_ids.push(IdMap::default());
        }
        let next_file = self.file_pages.len() as u32;
        let new_file = match rec.target {
            Target::Object { .. } => *self.objects.get_or_insert(next_file) == next_file,
            Target::File { name, .. } => {
                *self.files.entry(name.to_vec()).or_insert(next_file) == next_file
            }
            Target::Anon { .. } => false,
        };
        if new_file {
            self.file_pages.push(0);
            self.file_ids.push(IdMap::default());
        }
        let Some(loc) = self.locate(rec)? else {
            return Ok(None);
        };
        if self.requests == 0 {
            self.first_time = loc.time;
        } else if self.spec.timing == Timing::Trace && loc.time < *last {
            return Err(("time", format!("goes back from {} to {}", *last, loc.time)));
        }
        *last = loc.time;
        self.requests += 1;
        if loc.pages > MAX_OBJECT_PAGES {
            return Err((
                "obj_size",
                "objects of 64 GiB or more are not modelled".into(),
            ));
        }
        Ok(Some(loc))
    }

    /// Gives the keys of `batch` not seen before their pages, in order, and empties it.
    /// Done for a batch at a time so that the hash tables' cache misses overlap.
    fn assign(&mut self, batch: &mut Vec<Loc>) {
        for loc in batch.iter() {
            self.ids(loc.key).prefetch(loc.key.id());
        }
        for loc in batch.drain(..) {
            let (space, ids, id) = match loc.key {
                Key::Anon { tenant, page } => (
                    &mut self.anon_pages[loc.thread],
                    &mut self.anon_ids[tenant as usize],
                    page,
                ),
                Key::File { file, id } => (
                    &mut self.file_pages[file as usize],
                    &mut self.file_ids[file as usize],
                    id,
                ),
            };
            ids.get_or_insert_with(id, || {
                *space += loc.pages;
                Range {
                    first: *space - loc.pages,
                    pages: loc.pages,
                }
                .pack()
            });
        }
    }

    /// The ids' map of a key's space.
    fn ids(&self, key: Key) -> &IdMap {
        match key {
            Key::Anon { tenant, .. } => &self.anon_ids[tenant as usize],
            Key::File { file, .. } => &self.file_ids[file as usize],
        }
    }

    /// The pages the first pass gave a key.
    fn range(&self, key: Key) -> Option<Range> {
        self.ids(key).get(key.id()).map(Range::unpack)
    }

    fn unknown_tenant(&self, tenant: &[u8]) -> String {
        let mut known: Vec<_> = (self.spec.tenant_thread.keys())
            .map(|k| String::from_utf8_lossy(k))
            .collect();
        known.sort();
        format!(
            "\"{}\" is not in trace.tenants ({})",
            String::from_utf8_lossy(tenant),
            known.join(", ")
        )
    }

    /// The record's thread, key and size (`None`: a request of size 0, skipped). An
    /// error for a tenant or file the first pass did not intern.
    fn locate(&self, rec: &Record) -> Result<Option<Loc>, Bad> {
        let unknown = |what: &str| format!("a new {what}");
        let tenant = match self.needs_tenant(rec) {
            true => *self
                .tenants
                .get(rec.tenant)
                .ok_or_else(|| ("tenant", unknown("tenant")))?,
            false => 0,
        };
        let (key, pages) = match rec.target {
            Target::Object { size: Some(0), .. } => return Ok(None),
            Target::Object { id, size } => {
                let file = self.objects.ok_or_else(|| ("obj_id", unknown("object")))?;
                let bytes = size.filter(|_| !self.spec.ignore_obj_size);
                (
                    Key::File { file, id },
                    bytes.map_or(1, |b| b.div_ceil(PAGE_SIZE)),
                )
            }
            Target::Anon { addr } => (
                Key::Anon {
                    tenant,
                    page: addr / PAGE_SIZE,
                },
                1,
            ),
            Target::File { name, offset } => {
                let file = *self
                    .files
                    .get(name)
                    .ok_or_else(|| ("target", unknown("file")))?;
                (
                    Key::File {
                        file,
                        id: offset / PAGE_SIZE,
                    },
                    1,
                )
            }
        };
        Ok(Some(Loc {
            thread: match self.needs_tenant(rec) {
                true => self.tenant_thread[tenant as usize] as usize,
                false => 0,
            },
            key,
            pages,
            write: rec.write,
            time: rec.time,
        }))
    }
}

/// Requests read and looked up at a time by a thread's replay.
const BATCH: usize = 64;

/// A thread's replay: its own reader of the trace, the requests read from it (the first
/// may wait for its time) and the error met after them.
struct Replayer {
    reader: Option<Reader>,
    queue: VecDeque<Pending>,
    error: Option<String>,
}

/// A request's pages and when it is due.
#[derive(Clone, Copy)]
struct Pending {
    at_ns: u64,
    key: Key,
    range: Range,
    write: bool,
}

/// The trace generator: thread `t` replays the requests of the tenants mapped to it.
pub struct Trace {
    scan: Arc<Scan>,
    memcgs: Vec<String>,
    threads: Vec<Replayer>,
    /// The trace changed or became unreadable since the first pass.
    failure: Option<String>,
}

impl Trace {
    pub fn new(o: &TraceOptions) -> Result<Self, String> {
        let scan = o.scanned()?;
        let threads = scan.anon_pages.len();
        Ok(Trace {
            scan,
            memcgs: o.tenants.values().cloned().collect(),
            threads: (0..threads)
                .map(|_| Replayer {
                    reader: None,
                    queue: VecDeque::with_capacity(BATCH),
                    error: None,
                })
                .collect(),
            failure: None,
        })
    }

    /// Refills thread `t`'s queue with its next requests (empty at the end of the trace
    /// or at an error, which comes after the requests before it). The keys are looked up
    /// together after reading them, so the hash table's cache misses overlap.
    fn refill(&mut self, t: usize) -> Result<(), String> {
        let spec = &self.scan.spec;
        let replayer = &mut self.threads[t];
        debug_assert!(replayer.queue.is_empty());
        if let Some(e) = replayer.error.take() {
            return Err(e);
        }
        let reader = match &mut replayer.reader {
            Some(r) => r,
            r => r.insert(
                Reader::open(&spec.path, spec.format, &spec.cols).map_err(|e| e.to_string())?,
            ),
        };
        let mut locs: Vec<(u64, Option<u64>, Loc)> = Vec::with_capacity(BATCH);
        while locs.len() < BATCH && replayer.error.is_none() {
            let (line, loc) = match reader.read() {
                Ok(None) => break,
                Ok(Some(rec)) => (rec.line, self.scan.locate(&rec)),
                Err(e) => {
                    replayer.error = Some(e.to_string());
                    break;
                }
            };
            match loc {
                Ok(Some(loc)) if loc.thread == t => locs.push((reader.records(), line, loc)),
                Ok(_) => {}
                Err((field, m)) => replayer.error = Some(changed(reader.error(line, field, m))),
            }
        }
        for (_, _, loc) in &locs {
            self.scan.ids(loc.key).prefetch(loc.key.id());
        }
        for (record, line, loc) in locs {
            let Some(range) = self.scan.range(loc.key) else {
                let new = "a new object".into();
                replayer.error = Some(changed(reader.error_at(record, line, "", new)));
                break;
            };
            let at = (loc.time - self.scan.first_time) * spec.unit_ns;
            replayer.queue.push_back(Pending {
                at_ns: at as u64,
                key: loc.key,
                range: Range {
                    first: range.first,
                    pages: loc.pages.min(range.pages),
                },
                write: loc.write,
            });
        }
        match replayer.queue.is_empty() {
            true => replayer.error.take().map_or(Ok(()), Err),
            false => Ok(()),
        }
    }
}

/// A record the replay finds other than the first pass did.
fn changed(e: TraceError) -> String {
    format!("{e} (the trace changed since it was first read)")
}

impl Workload for Trace {
    fn layout(&self) -> Layout {
        let s = &self.scan;
        Layout {
            files: (s.file_pages.iter())
                .map(|&pages| super::FileSpec {
                    pages,
                    sparse: false,
                })
                .collect(),
            processes: s
                .anon_pages
                .iter()
                .map(|&pages| ProcessSpec {
                    regions: if pages > 0 {
                        vec![RegionSpec::Anon { pages }]
                    } else {
                        Vec::new()
                    },
                })
                .collect(),
            thread_process: (0..self.threads.len()).map(Some).collect(),
        }
    }

    fn phases(&self) -> Vec<String> {
        vec!["run".into()]
    }

    fn measured(&self, _phase: u8, _now_ns: u64) -> bool {
        true
    }

    fn process_memcg(&self, process: usize) -> Option<&str> {
        self.memcgs.get(process).map(String::as_str)
    }

    fn failure(&self) -> Option<String> {
        self.failure.clone()
    }

    fn next(&mut self, thread: usize, now_ns: u64, out: &mut Vec<Touch>) -> Step {
        if self.threads[thread].queue.is_empty() {
            if let Err(e) = self.refill(thread) {
                self.failure.get_or_insert(e);
                return Step::Done;
            }
        }
        let Some(&next) = self.threads[thread].queue.front() else {
            return Step::Done;
        };
        if self.scan.spec.timing == Timing::Trace && next.at_ns > now_ns {
            return Step::Sleep {
                until_ns: next.at_ns,
            };
        }
        self.threads[thread].queue.pop_front();
        let Range { first, pages } = next.range;
        for page in first..first + pages {
            out.push(match next.key {
                Key::Anon { .. } => Touch::Mem {
                    region: 0,
                    page,
                    write: next.write,
                },
                Key::File { file, .. } if next.write => Touch::Write { file, index: page },
                Key::File { file, .. } => Touch::Read { file, index: page },
            });
        }
        Step::Op {
            phase: 0,
            bytes: (pages * PAGE_SIZE).min(u32::MAX as u64) as u32,
        }
    }
}
