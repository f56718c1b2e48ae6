//! fio job files: INI text with `[global]` and job sections, read as fio reads them
//! (options of a `[global]` section apply to the jobs after it, a later value of an
//! option replaces an earlier one, a boolean option may stand alone) into one checked
//! `FioOptions` table per job. An option the model does not support is an error at its
//! line, never ignored.

use super::fio::{Fio, FioOptions};
use std::collections::BTreeMap;
use toml::{Table, Value};

/// One job section, checked.
#[derive(Debug, Clone)]
pub struct Job {
    /// The section name.
    pub name: String,
    /// The job's options as a `[workload.fio]` table.
    pub options: Table,
    /// `stonewall`: the job starts when the jobs before it have finished.
    pub stonewall: bool,
}

/// A bad job file: the 1-based line, the option (empty for a line that is not one), what
/// is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobFileError {
    pub line: usize,
    pub option: String,
    pub message: String,
}

/// How an option's value is written in a job file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Passed on as a string (sizes, times in seconds, names).
    Text,
    /// An integer.
    Count,
    /// `1`/`0`/`true`/`false`, or the option alone for true.
    Bool,
    /// A time whose bare number is in microseconds (fio's thinktime).
    Micros,
    /// Accepted, no effect on the model.
    Ignored,
    /// Must have this value (fio's `buffered`, `direct`): the model does only buffered I/O.
    Only(&'static str),
    /// fio's stonewall.
    Stonewall,
}

/// The options the model knows: the `FioOptions` field, and how the value is written.
/// fio's aliases map to the field's name.
fn option(name: &str) -> Option<(&'static str, Kind)> {
    use Kind::*;
    Some(match name {
        "rw" | "readwrite" => ("rw", Text),
        "rwmixread" => ("rwmixread", Count),
        "rwmixwrite" => ("rwmixwrite", Count),
        "size" => ("size", Text),
        "filesize" => ("filesize", Text),
        "offset" => ("offset", Text),
        "nrfiles" => ("nrfiles", Count),
        "file_service_type" => ("file_service_type", Text),
        "io_size" | "io_limit" => ("io_size", Text),
        "loops" => ("loops", Count),
        "number_ios" => ("number_ios", Count),
        "numjobs" => ("numjobs", Count),
        "bs" | "blocksize" => ("bs", Text),
        "random_distribution" => ("random_distribution", Text),
        "norandommap" => ("norandommap", Bool),
        "random_generator" => ("random_generator", Text),
        "time_based" => ("time_based", Bool),
        "ramp_time" => ("ramp_time", Text),
        "runtime" | "timeout" => ("runtime", Text),
        "thinktime" => ("thinktime", Micros),
        "ioengine" => ("ioengine", Text),
        "iodepth" => ("iodepth", Count),
        "iodepth_batch_submit" | "iodepth_batch" => ("iodepth_batch_submit", Count),
        "iodepth_batch_complete" | "iodepth_batch_complete_min" => {
            ("iodepth_batch_complete", Count)
        }
        "name" | "description" | "group_reporting" | "thread" | "directory" | "invalidate" => {
            ("", Ignored)
        }
        "buffered" => ("", Only("1")),
        "direct" => ("", Only("0")),
        "stonewall" | "wait_for_previous" => ("", Stonewall),
        _ => return None,
    })
}

/// The TOML value of `value` for an option of `kind`.
fn convert(kind: Kind, value: Option<&str>) -> Result<Value, String> {
    let need = || value.ok_or_else(|| "needs a value (option=value)".to_string());
    Ok(match kind {
        Kind::Text => Value::String(need()?.to_string()),
        Kind::Count => {
            let v = need()?;
            let n = v
                .parse::<i64>()
                .map_err(|_| format!("`{v}` is not a whole number"))?;
            Value::Integer(n)
        }
        Kind::Bool => match value.unwrap_or("1") {
            "1" | "true" => Value::Boolean(true),
            "0" | "false" => Value::Boolean(false),
            v => return Err(format!("`{v}` is not 0 or 1")),
        },
        Kind::Micros => {
            let v = need()?;
            let bare = v.chars().all(|c| c.is_ascii_digit());
            Value::String(if bare {
                format!("{v}us")
            } else {
                v.to_string()
            })
        }
        Kind::Ignored | Kind::Only(_) | Kind::Stonewall => Value::Boolean(true),
    })
}

/// A section being read: its options and the line each was last set on.
#[derive(Clone, Default)]
struct Section {
    name: String,
    line: usize,
    options: Table,
    lines: BTreeMap<String, usize>,
    stonewall: bool,
}

impl Section {
    /// Sets option `key` (`value` when given) read at `line`.
    fn set(&mut self, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
        let (field, kind) = option(key).ok_or_else(|| {
            "is not an fio option the model supports (see docs/reference/scenario.md, fio job files)".to_string()
        })?;
        let v = convert(kind, value)?;
        match kind {
            Kind::Only(want) if value.unwrap_or("1") != want => {
                return Err(format!(
                    "only {key}={want} is modelled (buffered I/O through the page cache)"
                ))
            }
            Kind::Stonewall => self.stonewall = true,
            Kind::Ignored | Kind::Only(_) => {}
            _ => {
                self.options.insert(field.to_string(), v);
                self.lines.insert(field.to_string(), line);
            }
        }
        Ok(())
    }
}

/// Reads a job file into its jobs, each checked as the fio workload checks its options.
pub fn parse(text: &str) -> Result<Vec<Job>, JobFileError> {
    let mut global = Section::default();
    let mut sections: Vec<Section> = Vec::new();
    let mut in_global = false;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let err = |option: &str, message: String| JobFileError {
            line,
            option: option.to_string(),
            message,
        };
        let l = raw.trim();
        if l.is_empty() || l.starts_with(';') || l.starts_with('#') {
            continue;
        }
        if let Some(name) = l.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            let name = name.trim();
            if name.is_empty() || name.contains(':') {
                return Err(err(
                    "",
                    format!("`[{name}]`: a job name is non-empty, without ':'"),
                ));
            }
            if sections.iter().any(|s| s.name == name) {
                return Err(err("", format!("job `{name}` is defined twice")));
            }
            in_global = name == "global";
            if !in_global {
                // A job starts from the [global] options read so far.
                sections.push(Section {
                    name: name.to_string(),
                    line,
                    ..global.clone()
                });
            }
            continue;
        }
        let (key, value) = match l.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (l, None),
        };
        let section = match sections.last_mut() {
            _ if in_global => &mut global,
            Some(s) => s,
            None => return Err(err(key, "is outside any [section]".into())),
        };
        section.set(key, value, line).map_err(|m| err(key, m))?;
    }
    if sections.is_empty() {
        let blank = |l: &str| l.trim().is_empty() || l.trim().starts_with([';', '#']);
        let message = match text.lines().all(blank) {
            true => "the job file is empty (it needs a [job] section)",
            false => "no job section (only [global])",
        };
        return Err(JobFileError {
            line: 1,
            option: String::new(),
            message: message.into(),
        });
    }
    sections.into_iter().map(check).collect()
}

/// Checks a job's options as `[workload.fio]` would be checked, locating an error at the
/// line of the option it names (or the section's header).
fn check(s: Section) -> Result<Job, JobFileError> {
    let at = |option: &str, message: String| JobFileError {
        line: s.lines.get(option).copied().unwrap_or(s.line),
        option: option.to_string(),
        message: format!("{message} (job `{}`)", s.name),
    };
    let options: FioOptions = serde_path_to_error::deserialize(Value::Table(s.options.clone()))
        .map_err(|e| at(&e.path().to_string(), e.inner().message().to_string()))?;
    if let Err(e) = Fio::new(&options, 0) {
        // Fio's errors start with `fio.OPTION: ` (or `fio.A, fio.B: `).
        let (option, message) = e
            .strip_prefix("fio.")
            .and_then(|r| r.split_once(": "))
            .map_or(("", e.as_str()), |(o, m)| {
                (o.split(',').next().unwrap_or(o), m)
            });
        return Err(at(option, message.to_string()));
    }
    Ok(Job {
        name: s.name,
        options: s.options,
        stonewall: s.stonewall,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "\
; a comment
[global]
size=1m
ioengine=psync
rw=randread

[reader]
numjobs=2
norandommap

# another
[writer]
stonewall
rw=randwrite
readwrite=write
thinktime=20
";

    #[test]
    fn global_options_apply_to_later_jobs_and_later_values_win() {
        let jobs = parse(FILE).unwrap();
        assert_eq!(jobs.len(), 2);
        let (r, w) = (&jobs[0], &jobs[1]);
        assert_eq!(
            (r.name.as_str(), r.stonewall, w.stonewall),
            ("reader", false, true)
        );
        assert_eq!(r.options["size"].as_str(), Some("1m"));
        assert_eq!(r.options["numjobs"].as_integer(), Some(2));
        assert_eq!(r.options["norandommap"].as_bool(), Some(true));
        assert_eq!(w.options["rw"].as_str(), Some("write"));
        assert_eq!(w.options["thinktime"].as_str(), Some("20us"));
        assert!(w.options.get("numjobs").is_none());
    }

    #[test]
    fn errors_name_the_line_and_option() {
        let err = |text: &str| parse(text).unwrap_err();
        let e = err("[j]\nsize=1m\nfsync=4\n");
        assert_eq!((e.line, e.option.as_str()), (3, "fsync"));
        assert!(e.message.contains("not an fio option"), "{e:?}");
        let e = err("[global]\nbs=8k\n[j]\nsize=1m\n");
        assert_eq!((e.line, e.option.as_str()), (2, "bs"), "{e:?}");
        let e = err("[j]\nsize=1m\nrw=trim\n");
        assert_eq!((e.line, e.option.as_str()), (3, "rw"), "{e:?}");
        let e = err("[j]\nsize=lots\n");
        assert_eq!((e.line, e.option.as_str()), (2, "size"), "{e:?}");
        let e = err("[j]\nrw=read\n");
        assert_eq!((e.line, e.option.as_str()), (1, "size"), "{e:?}");
        let e = err("[j]\nsize=1m\ndirect=1\n");
        assert_eq!((e.line, e.option.as_str()), (3, "direct"), "{e:?}");
        let e = err("[j]\nsize=1m\nnumjobs=two\n");
        assert_eq!((e.line, e.option.as_str()), (3, "numjobs"), "{e:?}");
        assert_eq!(err("size=1m\n[j]\n").line, 1);
        assert_eq!(
            err("[global]\nsize=1m\n").message,
            "no job section (only [global])"
        );
        for empty in ["", "\n; a comment\n\n"] {
            assert_eq!(
                err(empty).message,
                "the job file is empty (it needs a [job] section)"
            );
        }
        assert_eq!(err("[a]\nsize=1m\n[a]\n").line, 3);
    }
}
