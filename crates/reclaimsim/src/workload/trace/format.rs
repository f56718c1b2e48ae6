//! Trace file formats, read one record at a time through a buffered reader (constant
//! memory in the trace's length): libCacheSim's oracleGeneral binary, its csv and txt,
//! and reclaimsim's page format; any of them zstd-compressed.

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

/// The formats a trace can be in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// libCacheSim's oracleGeneral: 24-byte little-endian records (u32 clock_time in
    /// seconds, u64 obj_id, u32 obj_size, i64 next_access_vtime, which is ignored).
    OracleGeneral,
    /// Delimited text with libCacheSim's column options (`Columns`).
    Csv,
    /// libCacheSim's txt: one obj_id per line, no time, no size.
    Txt,
    /// reclaimsim's page format: csv with the header `PAGE_HEADER`.
    Page,
}

/// The header line of the page format.
pub const PAGE_HEADER: &str = "time,tenant,target,offset,op";

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
const ORACLE_RECORD: usize = 24;

impl Format {
    /// The format a file's name implies once `.zst` is stripped: `*.oracleGeneral*` or
    /// `*.bin` is oracleGeneral, `*.csv` csv, `*.txt` txt, `*.pagetrace` the page format.
    pub fn from_name(path: &Path) -> Option<Format> {
        let name = path.file_name()?.to_string_lossy();
        let name = name.strip_suffix(".zst").unwrap_or(&name);
        if name.contains("oracleGeneral") || name.ends_with(".bin") {
            Some(Format::OracleGeneral)
        } else if name.ends_with(".csv") {
            Some(Format::Csv)
        } else if name.ends_with(".txt") {
            Some(Format::Txt)
        } else {
            name.ends_with(".pagetrace").then_some(Format::Page)
        }
    }

    const ALL: [Format; 4] = [
        Format::OracleGeneral,
        Format::Csv,
        Format::Txt,
        Format::Page,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::OracleGeneral => "oracleGeneral",
            Format::Csv => "csv",
            Format::Txt => "txt",
            Format::Page => "page",
        }
    }

    pub fn parse(s: &str) -> Result<Format, String> {
        Format::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| format!("\"{s}\" is not a trace format (oracleGeneral, csv, txt, page)"))
    }

    /// Whether records carry a time.
    pub fn has_time(self, cols: &Columns) -> bool {
        match self {
            Format::OracleGeneral | Format::Page => true,
            Format::Csv => cols.time.is_some() || cols.has_header,
            Format::Txt => false,
        }
    }
}

/// Which csv columns (0-based) hold what. With a header, the header names them (`time`,
/// `obj_id`, `obj_size`, `tenant`) and the columns given here win.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Columns {
    pub time: Option<usize>,
    pub obj_id: Option<usize>,
    pub obj_size: Option<usize>,
    pub tenant: Option<usize>,
    pub delimiter: u8,
    pub has_header: bool,
}

/// What a record touches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target<'a> {
    /// A cache object of `size` bytes (`None` when the trace gives no size).
    Object { id: u64, size: Option<u64> },
    /// The tenant's anonymous memory at this byte address.
    Anon { addr: u64 },
    /// A file, by name, at this byte offset.
    File { name: &'a [u8], offset: u64 },
}

/// One request of a trace.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Record<'a> {
    /// The line, for text formats.
    pub line: Option<u64>,
    /// In the trace's own unit (seconds for libCacheSim's formats); 0 without a time.
    pub time: f64,
    /// Empty without a tenant column.
    pub tenant: &'a [u8],
    pub target: Target<'a>,
    pub write: bool,
}

/// A bad trace: the file, the record (1-based; 0 for the file as a whole), the line for
/// text formats, the field and what is wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceError {
    pub file: String,
    pub record: u64,
    pub line: Option<u64>,
    pub field: &'static str,
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if self.record > 0 {
            write!(f, ": record {}", self.record)?;
        }
        if let Some(line) = self.line {
            write!(f, " (line {line})")?;
        }
        if !self.field.is_empty() {
            write!(f, ": {}", self.field)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// A streaming reader of one trace file.
pub struct Reader {
    file: String,
    /// Records read so far.
    record: u64,
    inner: Inner,
}

enum Inner {
    Oracle(Box<dyn BufRead>, [u8; ORACLE_RECORD]),
    /// The stream, the line buffer and the lines read.
    Txt(Box<dyn BufRead>, Vec<u8>, u64),
    Csv(Box<csv::Reader<Box<dyn BufRead>>>, csv::ByteRecord, Columns),
    Page(Box<csv::Reader<Box<dyn BufRead>>>, csv::ByteRecord),
}

/// Opens a file for reading, through zstd when it starts with zstd's magic number.
fn open_stream(
    path: &Path,
    err: &dyn Fn(String) -> TraceError,
) -> Result<Box<dyn BufRead>, TraceError> {
    let file = File::open(path).map_err(|e| err(format!("cannot open: {e}")))?;
    let mut buf = BufReader::with_capacity(1 << 16, file);
    let head = buf
        .fill_buf()
        .map_err(|e| err(format!("cannot read: {e}")))?;
    if head.starts_with(&ZSTD_MAGIC) {
        let dec = zstd::Decoder::with_buffer(buf).map_err(|e| err(format!("zstd: {e}")))?;
        return Ok(Box::new(BufReader::with_capacity(1 << 16, dec)));
    }
    if path.extension().is_some_and(|e| e == "zst") {
        return Err(err(
            "named .zst but not zstd-compressed (bad magic number)".into()
        ));
    }
    Ok(Box::new(buf))
}

impl Reader {
    pub fn open(path: &Path, format: Format, cols: &Columns) -> Result<Reader, TraceError> {
        let file = path.display().to_string();
        let err = |message| TraceError {
            file: file.clone(),
            record: 0,
            line: None,
            field: "",
            message,
        };
        let stream = open_stream(path, &err)?;
        let inner = match format {
            Format::OracleGeneral => Inner::Oracle(stream, [0; ORACLE_RECORD]),
            Format::Txt => Inner::Txt(stream, Vec::new(), 0),
            Format::Csv => {
                let mut r = csv_reader(stream, cols.delimiter, cols.has_header);
                let cols = resolve_columns(&mut r, cols).map_err(err)?;
                Inner::Csv(Box::new(r), csv::ByteRecord::new(), cols)
            }
            Format::Page => {
                let mut r = csv_reader(stream, b',', true);
                let header = r
                    .byte_headers()
                    .map_err(|e| err(format!("cannot read: {e}")))?;
                if !header.iter().eq(PAGE_HEADER.split(',').map(str::as_bytes)) {
                    return Err(err(format!(
                        "not a page trace: its first line must be `{PAGE_HEADER}`"
                    )));
                }
                Inner::Page(Box::new(r), csv::ByteRecord::new())
            }
        };
        Ok(Reader {
            file,
            record: 0,
            inner,
        })
    }

    /// Records read so far: the number of the one last read.
    pub fn records(&self) -> u64 {
        self.record
    }

    /// An error about the record last read (unknown tenant, time going back).
    pub fn error(&self, line: Option<u64>, field: &'static str, message: String) -> TraceError {
        self.error_at(self.record, line, field, message)
    }

    /// An error about record `record` (1-based), read earlier.
    pub fn error_at(
        &self,
        record: u64,
        line: Option<u64>,
        field: &'static str,
        message: String,
    ) -> TraceError {
        debug_assert!(record <= self.record);
        TraceError {
            file: self.file.clone(),
            record,
            line,
            field,
            message,
        }
    }

    /// The next record, `None` at the end of the trace.
    pub fn read(&mut self) -> Result<Option<Record<'_>>, TraceError> {
        let record = self.record + 1;
        let err = |line, field, message| TraceError {
            file: self.file.clone(),
            record,
            line,
            field,
            message,
        };
        let rec = match &mut self.inner {
            Inner::Oracle(r, buf) => read_oracle(r, buf).map_err(|m| err(None, "", m))?,
            Inner::Txt(r, buf, line) => {
                read_txt(r, buf, line).map_err(|m| err(Some(*line), "", m))?
            }
            Inner::Csv(r, rec, cols) => read_csv(r, rec, cols).map_err(|(l, f, m)| err(l, f, m))?,
            Inner::Page(r, rec) => read_page(r, rec).map_err(|(l, f, m)| err(l, f, m))?,
        };
        if rec.is_some() {
            self.record = record;
        }
        Ok(rec)
    }
}

fn csv_reader(
    stream: Box<dyn BufRead>,
    delimiter: u8,
    has_header: bool,
) -> csv::Reader<Box<dyn BufRead>> {
    csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(has_header)
        .trim(csv::Trim::All)
        .flexible(true)
        .comment(Some(b'#'))
        .from_reader(stream)
}

/// Columns named by the header where the options name none.
fn resolve_columns(
    r: &mut csv::Reader<Box<dyn BufRead>>,
    cols: &Columns,
) -> Result<Columns, String> {
    let mut cols = cols.clone();
    if cols.has_header {
        let header = r
            .byte_headers()
            .map_err(|e| format!("cannot read the header: {e}"))?;
        if header.is_empty() {
            return Err("the file is empty".into());
        }
        let find = |name: &str| {
            header
                .iter()
                .position(|h| h.eq_ignore_ascii_case(name.as_bytes()))
        };
        cols.time = cols.time.or_else(|| find("time"));
        cols.obj_id = cols.obj_id.or_else(|| find("obj_id"));
        cols.obj_size = cols.obj_size.or_else(|| find("obj_size"));
        cols.tenant = cols.tenant.or_else(|| find("tenant"));
    }
    if cols.obj_id.is_none() {
        return Err("no obj_id column: name one `obj_id` in the header or set obj_id_col".into());
    }
    Ok(cols)
}

/// Reads up to `buf.len()` bytes; fewer only at the end of the stream.
fn read_full(r: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

fn read_oracle<'a>(
    r: &mut Box<dyn BufRead>,
    buf: &'a mut [u8; ORACLE_RECORD],
) -> Result<Option<Record<'a>>, String> {
    match read_full(r, buf).map_err(|e| format!("cannot read: {e}"))? {
        0 => return Ok(None),
        ORACLE_RECORD => {}
        n => {
            return Err(format!(
                "truncated: {n} of the record's {ORACLE_RECORD} bytes (not an oracleGeneral trace, or cut short)"
            ))
        }
    }
    let u32_at = |i: usize| u32::from_le_bytes(buf[i..i + 4].try_into().unwrap());
    let id = u64::from_le_bytes(buf[4..12].try_into().unwrap());
    Ok(Some(Record {
        line: None,
        time: u32_at(0) as f64,
        tenant: &[],
        target: Target::Object {
            id,
            size: Some(u32_at(12) as u64),
        },
        write: false,
    }))
}

fn read_txt<'a>(
    r: &mut Box<dyn BufRead>,
    line: &'a mut Vec<u8>,
    number: &mut u64,
) -> Result<Option<Record<'a>>, String> {
    loop {
        *number += 1;
        line.clear();
        if r.read_until(b'\n', line)
            .map_err(|e| format!("cannot read: {e}"))?
            == 0
        {
            return Ok(None);
        }
        let id = line.trim_ascii();
        if id.is_empty() {
            continue;
        }
        return Ok(Some(Record {
            line: Some(*number),
            time: 0.0,
            tenant: &[],
            target: Target::Object {
                id: obj_id(id),
                size: None,
            },
            write: false,
        }));
    }
}

/// A located field error of a text record: line, field, message.
type FieldError = (Option<u64>, &'static str, String);

fn next_row(
    r: &mut csv::Reader<Box<dyn BufRead>>,
    rec: &mut csv::ByteRecord,
) -> Result<bool, FieldError> {
    r.read_byte_record(rec).map_err(|e| {
        let line = e.position().map(|p| p.line());
        (line, "", format!("cannot read: {e}"))
    })
}

fn read_csv<'a>(
    r: &mut csv::Reader<Box<dyn BufRead>>,
    rec: &'a mut csv::ByteRecord,
    cols: &Columns,
) -> Result<Option<Record<'a>>, FieldError> {
    if !next_row(r, rec)? {
        return Ok(None);
    }
    let line = rec.position().map(|p| p.line());
    let field = |col: Option<usize>, name: &'static str| -> Result<Option<&[u8]>, FieldError> {
        match col {
            None => Ok(None),
            Some(c) => rec
                .get(c)
                .map(Some)
                .ok_or_else(|| (line, name, format!("no column {}", c + 1))),
        }
    };
    let id = obj_id(field(cols.obj_id, "obj_id")?.unwrap_or_default());
    let time = match field(cols.time, "time")? {
        Some(t) => parse_time(t).map_err(|m| (line, "time", m))?,
        None => 0.0,
    };
    let size = match field(cols.obj_size, "obj_size")? {
        Some(s) => Some(parse_u64(s).map_err(|m| (line, "obj_size", m))?),
        None => None,
    };
    Ok(Some(Record {
        line,
        time,
        tenant: field(cols.tenant, "tenant")?.unwrap_or_default(),
        target: Target::Object { id, size },
        write: false,
    }))
}

fn read_page<'a>(
    r: &mut csv::Reader<Box<dyn BufRead>>,
    rec: &'a mut csv::ByteRecord,
) -> Result<Option<Record<'a>>, FieldError> {
    if !next_row(r, rec)? {
        return Ok(None);
    }
    let line = rec.position().map(|p| p.line());
    if rec.len() != 5 {
        return Err((
            line,
            "",
            format!("{} fields, not the 5 of `{PAGE_HEADER}`", rec.len()),
        ));
    }
    let time = parse_time(&rec[0]).map_err(|m| (line, "time", m))?;
    let offset = parse_u64(&rec[3]).map_err(|m| (line, "offset", m))?;
    let write = match &rec[4] {
        b"r" | b"R" => false,
        b"w" | b"W" => true,
        op => {
            return Err((
                line,
                "op",
                format!("\"{}\" is neither r nor w", String::from_utf8_lossy(op)),
            ))
        }
    };
    let target = match &rec[2] {
        b"" => return Err((line, "target", "empty (anon or a file name)".into())),
        b"anon" => Target::Anon { addr: offset },
        name => Target::File { name, offset },
    };
    Ok(Some(Record {
        line,
        time,
        tenant: &rec[1],
        target,
        write,
    }))
}

/// An object id: a decimal number, or any other text hashed to 64 bits.
fn obj_id(field: &[u8]) -> u64 {
    match std::str::from_utf8(field).ok().and_then(|s| s.parse().ok()) {
        Some(n) => n,
        None => {
            use std::hash::{Hash, Hasher};
            let mut h = std::hash::DefaultHasher::new();
            field.hash(&mut h);
            h.finish()
        }
    }
}

/// A decimal or `0x` hexadecimal integer.
fn parse_u64(field: &[u8]) -> Result<u64, String> {
    let s = std::str::from_utf8(field).unwrap_or("");
    let n = match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    };
    n.ok_or_else(|| {
        format!(
            "\"{}\" is not a non-negative integer",
            String::from_utf8_lossy(field)
        )
    })
}

/// A time: a finite non-negative number.
fn parse_time(field: &[u8]) -> Result<f64, String> {
    std::str::from_utf8(field)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|t| t.is_finite() && *t >= 0.0)
        .ok_or_else(|| {
            format!(
                "\"{}\" is not a non-negative number",
                String::from_utf8_lossy(field)
            )
        })
}
