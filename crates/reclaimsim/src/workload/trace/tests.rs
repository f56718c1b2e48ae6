use super::*;
use std::path::Path;

/// A fresh file in a directory of this test process.
fn file(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("reclaimsim-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// oracleGeneral records of (time, id, size).
fn oracle(records: &[(u32, u64, u32)]) -> Vec<u8> {
    let mut out = Vec::new();
    for &(t, id, size) in records {
        out.extend(t.to_le_bytes());
        out.extend(id.to_le_bytes());
        out.extend(size.to_le_bytes());
        out.extend((-1i64).to_le_bytes());
    }
    out
}

fn options(path: &Path, extra: &str) -> TraceOptions {
    toml::from_str(&format!("path = {:?}\n{extra}", path.display().to_string())).unwrap()
}

fn build(path: &Path, extra: &str) -> Result<Trace, String> {
    Trace::new(&options(path, extra))
}

/// Thread `t`'s operations, as touches, replayed with time standing still at `now`.
fn replay(w: &mut Trace, t: usize, now: u64) -> Vec<Vec<Touch>> {
    let mut ops = Vec::new();
    loop {
        let mut out = Vec::new();
        match w.next(t, now, &mut out) {
            Step::Op { .. } => ops.push(out),
            Step::Done => break,
            s => panic!("unexpected {s:?}"),
        }
    }
    assert_eq!(w.failure(), None);
    ops
}

fn reads(pages: std::ops::Range<u64>) -> Vec<Touch> {
    pages.map(|index| Touch::Read { file: 0, index }).collect()
}

#[test]
fn objects_map_to_pages_by_size_and_size_zero_is_skipped() {
    let recs = oracle(&[
        (0, 7, 5000),
        (1, 9, 100),
        (1, 5, 0),
        (2, 7, 5000),
        (3, 9, 9000),
    ]);
    for (name, bytes) in [
        ("a.oracleGeneral.bin", recs.clone()),
        (
            "a.oracleGeneral.bin.zst",
            zstd::encode_all(&recs[..], 3).unwrap(),
        ),
    ] {
        let mut w = build(&file(name, &bytes), "").unwrap();
        assert_eq!(
            w.layout().files,
            vec![super::super::FileSpec {
                pages: 3,
                sparse: false
            }]
        );
        // Object 9's range stays the one page it was given first.
        let want = vec![reads(0..2), reads(2..3), reads(0..2), reads(2..3)];
        assert_eq!(replay(&mut w, 0, 0), want, "{name}");
    }
    let mut w = build(&file("b.bin", &recs), "ignore_obj_size = true").unwrap();
    assert_eq!(
        replay(&mut w, 0, 0),
        vec![reads(0..1), reads(1..2), reads(0..1), reads(1..2)]
    );
}

#[test]
fn csv_by_header_or_by_columns_and_txt() {
    let named = file(
        "n.csv",
        b"obj_size,obj_id,time\n4096,a,1\n8192,b,2\n4096,a,3\n",
    );
    let cols = file("c.csv", b"1;x;4096\n2;y;8192\n3;x;4096\n");
    let txt = file("t.txt", b"1\n\n2\n1\n");
    let cols_opts = "obj_id_col = 2\nobj_size_col = 3\ndelimiter = ';'\nhas_header = false";
    let want = vec![reads(0..1), reads(1..3), reads(0..1)];
    assert_eq!(replay(&mut build(&named, "").unwrap(), 0, 0), want);
    assert_eq!(replay(&mut build(&cols, cols_opts).unwrap(), 0, 0), want);
    let want = vec![reads(0..1), reads(1..2), reads(0..1)];
    assert_eq!(replay(&mut build(&txt, "").unwrap(), 0, 0), want);
}

#[test]
fn page_format_tenants_are_threads_with_their_own_memory() {
    let text = "time,tenant,target,offset,op\n\
                0,3,anon,0x7f0000001000,w\n\
                5,4,anon,0x7f0000001000,r\n\
                9,3,data,8192,r\n\
                12,3,anon,0x7f0000001fff,r\n";
    let path = file("p.pagetrace", text.as_bytes());
    let mut w = build(
        &path,
        "timing = 'trace'\ntenants = { \"3\" = \"/a\", \"4\" = \"/b\" }",
    )
    .unwrap();
    let l = w.layout();
    assert_eq!(l.files.len(), 1);
    assert_eq!(l.processes[0].regions, vec![RegionSpec::Anon { pages: 1 }]);
    assert_eq!(l.processes[1].regions, vec![RegionSpec::Anon { pages: 1 }]);
    assert_eq!(
        (w.process_memcg(0), w.process_memcg(1)),
        (Some("/a"), Some("/b"))
    );
    let mut out = Vec::new();
    let write = Touch::Mem {
        region: 0,
        page: 0,
        write: true,
    };
    assert!(matches!(w.next(0, 0, &mut out), Step::Op { .. }) && out == [write]);
    // Time 9 (ns by default in this format) is not yet due at 4.
    assert_eq!(w.next(0, 4, &mut out), Step::Sleep { until_ns: 9 });
    out.clear();
    assert!(matches!(w.next(0, 9, &mut out), Step::Op { .. }));
    assert_eq!(out, [Touch::Read { file: 0, index: 0 }]);
    let mut out = Vec::new();
    assert!(matches!(w.next(1, 5, &mut out), Step::Op { .. }));
    assert_eq!(
        out,
        [Touch::Mem {
            region: 0,
            page: 0,
            write: false
        }]
    );
}

#[test]
fn a_page_trace_write_to_a_file_is_a_buffered_write() {
    let text = b"time,tenant,target,offset,op\n0,1,f,4096,w\n0,1,f,4096,r\n";
    let mut w = build(&file("w.pagetrace", text), "").unwrap();
    let mut out = Vec::new();
    assert!(matches!(w.next(0, 0, &mut out), Step::Op { .. }));
    assert_eq!(out, [Touch::Write { file: 0, index: 0 }]);
    out.clear();
    assert!(matches!(w.next(0, 0, &mut out), Step::Op { .. }));
    assert_eq!(out, [Touch::Read { file: 0, index: 0 }]);
}

/// The error message of building a trace of `bytes` named `name`.
fn error(name: &str, bytes: &[u8], extra: &str) -> String {
    build(&file(name, bytes), extra).err().expect("an error")
}

#[test]
fn bad_traces_are_located_errors() {
    let mut cut = oracle(&[(0, 1, 4096), (0, 2, 4096)]);
    cut.truncate(40);
    let e = error("cut.bin", &cut, "");
    assert!(e.ends_with("cut.bin: record 2: truncated: 16 of the record's 24 bytes (not an oracleGeneral trace, or cut short)"), "{e}");
    let e = error("plain.bin.zst", &oracle(&[(0, 1, 1)]), "");
    assert!(
        e.contains("plain.bin.zst: named .zst but not zstd-compressed (bad magic number)"),
        "{e}"
    );
    let e = error("x.pagetrace", b"time,pid,addr\n1,2,3\n", "");
    assert!(
        e.contains(
            "x.pagetrace: not a page trace: its first line must be `time,tenant,target,offset,op`"
        ),
        "{e}"
    );
    let back = oracle(&[(5, 1, 1), (6, 2, 1), (4, 3, 1)]);
    let e = error("back.bin", &back, "timing = 'trace'");
    assert!(
        e.ends_with("back.bin: record 3: time: goes back from 6 to 4"),
        "{e}"
    );
    assert!(
        build(&file("back2.bin", &back), "").is_ok(),
        "as fast as possible, time does not matter"
    );
    let e = error(
        "t.csv",
        b"time,obj_id,tenant\n1,2,a\n2,3,b\n",
        "tenants = { a = '/a' }",
    );
    assert!(
        e.ends_with("t.csv: record 2 (line 3): tenant: \"b\" is not in trace.tenants (a)"),
        "{e}"
    );
    let e = error("s.csv", b"obj_id,obj_size\n1,4096\n2,big\n", "");
    assert!(
        e.ends_with("s.csv: record 2 (line 3): obj_size: \"big\" is not a non-negative integer"),
        "{e}"
    );
    let e = error("n.csv", b"time,key\n1,2\n", "");
    assert!(e.contains("no obj_id column"), "{e}");
    let e = error("empty.csv", b"", "");
    assert!(e.ends_with("empty.csv: the file is empty"), "{e}");
    let e = error("blank.csv", b"\n# nothing\n", "");
    assert!(e.ends_with("blank.csv: the file is empty"), "{e}");
    assert!(error("x.dat", b"", "").starts_with("trace.format: cannot tell the format"));
    assert!(error("e.bin", b"", "").ends_with("e.bin: no requests"));
    assert!(error("o.txt", b"1\n", "time_col = 1").contains("csv options"));
    assert!(error("o2.txt", b"1\n", "timing = 'trace'").starts_with("trace.timing:"));
    let e = build(Path::new("/nonexistent/x.bin"), "").err().unwrap();
    assert!(e.starts_with("/nonexistent/x.bin: cannot open: "), "{e}");
}

#[test]
fn a_trace_that_changes_after_the_first_pass_fails_the_workload() {
    let path = file("changes.bin", &oracle(&[(0, 1, 4096), (0, 2, 4096)]));
    let mut w = build(&path, "").unwrap();
    std::fs::write(&path, oracle(&[(0, 1, 4096), (0, 3, 4096)])).unwrap();
    let mut out = Vec::new();
    assert!(matches!(w.next(0, 0, &mut out), Step::Op { .. }));
    assert_eq!(w.next(0, 0, &mut out), Step::Done);
    let e = w.failure().unwrap();
    assert!(
        e.contains("record 2: a new object (the trace changed since it was first read)"),
        "{e}"
    );
}
