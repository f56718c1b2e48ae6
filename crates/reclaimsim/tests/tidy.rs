//! Tidy checks on the source itself (ARCHITECTURE.md, "Invariants"): the kernel model
//! names no scenario, output, TOML or JSON; the library's top-level modules depend only
//! on the layers below them; no function is longer than 70 lines unless it is listed in
//! `tests/tidy-long-functions.txt` (and a listed one that got shorter must leave the
//! list).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The library's top-level modules, lowest layer first: each may use only those before it.
const LAYERS: [&str; 8] = [
    "units", "sim", "kernel", "workload", "scenario", "engine", "results", "output",
];

/// What no file under src/kernel/ may name (code and unit tests alike; comments aside).
const KERNEL_FORBIDDEN: [&str; 4] = ["crate::scenario", "crate::output", "serde_json", "toml::"];

const MAX_FN_LINES: usize = 70;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// A line without its `//` comment (a `//` inside a string literal is rare enough in
/// this code base that a line holding one is taken whole).
fn code(line: &str) -> &str {
    let t = line.trim_start();
    if t.starts_with("//") {
        return "";
    }
    match line.find("//") {
        Some(i) if !line[..i].contains('"') => &line[..i],
        _ => line,
    }
}

/// The leading identifier of `s` (a module's name after `crate::`).
fn ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// The first names of the items of a `use` group, `a, b::c, d::{e, f}}...` after its
/// opening brace: `a`, `b`, `d`.
fn group_items(group: &str) -> Vec<String> {
    let (mut items, mut depth, mut start) = (Vec::new(), 0, true);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => start = true,
            c if start && depth == 0 && !c.is_whitespace() => {
                start = false;
                items.push(ident(&group[i..]));
            }
            _ => {}
        }
    }
    items
}

/// The top-level modules a file's code names (comments aside), each with the line
/// (1-based) that names it: `crate::x::...`, and each item of a group
/// `crate::{x, y::z}`, on one line or over several.
fn crate_names(text: &str) -> Vec<(usize, String)> {
    let code_text: Vec<&str> = text.lines().map(code).collect();
    let joined = code_text.join("\n");
    let mut out = Vec::new();
    for (at, _) in joined.match_indices("crate::") {
        let line = joined[..at].matches('\n').count() + 1;
        let rest = &joined[at + "crate::".len()..];
        match rest.strip_prefix('{') {
            Some(group) => out.extend(group_items(group).into_iter().map(|m| (line, m))),
            None => out.push((line, ident(rest))),
        }
    }
    out
}

#[test]
fn crate_names_reads_paths_and_groups() {
    let text = "use crate::units::Bytes;\n// crate::engine in a comment\n\
                use crate::{sim, scenario::config::{A, B}, self};\n\
                use crate::{\n    output::report,\n    kernel,\n};\n";
    let found = crate_names(text);
    let names: Vec<(usize, &str)> = found.iter().map(|(l, m)| (*l, m.as_str())).collect();
    assert_eq!(
        names,
        [
            (1, "units"),
            (3, "sim"),
            (3, "scenario"),
            (3, "self"),
            (4, "output"),
            (4, "kernel")
        ]
    );
}

#[test]
fn the_kernel_names_no_scenario_output_toml_or_json() {
    let mut files = Vec::new();
    rust_files(
        &workspace().join("crates/reclaimsim/src/kernel"),
        &mut files,
    );
    assert!(files.len() > 20, "src/kernel/ not found");
    let mut bad = Vec::new();
    for f in &files {
        let text = fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            for word in KERNEL_FORBIDDEN {
                if code(line).contains(word) {
                    bad.push(format!("{}:{}: {word}", f.display(), i + 1));
                }
            }
        }
        // `use crate::{scenario, ...}` names a layer without the words above.
        for (line, m) in crate_names(&text) {
            if KERNEL_FORBIDDEN.contains(&format!("crate::{m}").as_str()) {
                bad.push(format!("{}:{line}: crate::{{{m}}}", f.display()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "the kernel model names a layer above it or a format:\n{}",
        bad.join("\n")
    );
}

/// For each top-level module of the library, the other top-level modules its code names
/// (`crate::X`, or `X` in a group `crate::{X, ...}`), each with the first place that does.
fn module_uses() -> BTreeMap<String, BTreeMap<String, String>> {
    let src = workspace().join("crates/reclaimsim/src");
    let mut uses: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" {
            continue;
        }
        let text = fs::read_to_string(f).unwrap();
        for (line, name) in crate_names(&text) {
            if name != module && LAYERS.contains(&name.as_str()) {
                let place = format!("{}:{line}", rel.display());
                uses.entry(module.clone())
                    .or_default()
                    .entry(name)
                    .or_insert(place);
            }
        }
    }
    uses
}

#[test]
fn top_level_modules_use_only_the_layers_below_them() {
    let uses = module_uses();
    let src = workspace().join("crates/reclaimsim/src");
    for m in LAYERS {
        assert!(
            src.join(m).is_dir() || src.join(format!("{m}.rs")).is_file(),
            "layer {m} has no module"
        );
    }
    let rank = |m: &str| LAYERS.iter().position(|l| *l == m);
    let mut bad = Vec::new();
    for (m, used) in &uses {
        let Some(r) = rank(m) else {
            bad.push(format!("{m}: a top-level module missing from LAYERS"));
            continue;
        };
        for (u, place) in used {
            if rank(u).unwrap() > r {
                bad.push(format!("{place}: {m} uses {u}, a layer above it"));
            }
        }
    }
    assert!(bad.is_empty(), "layering broken:\n{}", bad.join("\n"));
    assert!(cycle(&uses).is_none(), "a cycle: {:?}", cycle(&uses));
}

/// A cycle among the modules' uses, if there is one (depth-first search).
fn cycle(uses: &BTreeMap<String, BTreeMap<String, String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        uses: &BTreeMap<String, BTreeMap<String, String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == m) {
            return Some(path[i..].to_vec());
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_string());
        for u in uses.get(m).into_iter().flat_map(|u| u.keys()) {
            if let Some(c) = visit(u, uses, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    uses.keys()
        .find_map(|m| visit(m, uses, &mut Vec::new(), &mut done))
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let mut uses: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    uses.entry("a".into())
        .or_default()
        .insert("b".into(), String::new());
    uses.entry("b".into())
        .or_default()
        .insert("c".into(), String::new());
    assert_eq!(cycle(&uses), None);
    uses.entry("c".into())
        .or_default()
        .insert("a".into(), String::new());
    assert_eq!(cycle(&uses).map(|c| c.len()), Some(3));
}

/// Functions in `text`: (name, first line, number of lines from the `fn` line to its
/// closing brace). Braces in strings, chars and comments are skipped.
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let c = code(line);
        let Some(at) = c.find("fn ").filter(|&at| {
            let before = c[..at].trim();
            at == 0
                || before.is_empty()
                || before.ends_with(')')
                || before.split_whitespace().all(|w| {
                    matches!(
                        w,
                        "pub" | "const" | "unsafe" | "async" | "extern" | "\"C\"" | "default"
                    ) || w.starts_with("pub(")
                })
        }) else {
            continue;
        };
        let name: String = c[at + 3..]
            .chars()
            .take_while(|ch| ch.is_ascii_alphanumeric() || *ch == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        if let Some(end) = body_end(&lines, i) {
            found.push((name, i + 1, end - i + 1));
        }
    }
    found
}

/// The line where the body opened at or after line `start` closes; None for a
/// declaration without a body (a trait method ending in `;`).
fn body_end(lines: &[&str], start: usize) -> Option<usize> {
    let mut depth = 0i32;
    let mut opened = false;
    for (j, line) in lines.iter().enumerate().skip(start) {
        let mut chars = code(line).chars().peekable();
        let mut in_str = false;
        while let Some(ch) = chars.next() {
            match ch {
                '\\' if in_str => {
                    chars.next();
                }
                '"' => in_str = !in_str,
                '\'' if !in_str => {
                    // A char literal ('{', '\n') or a lifetime ('a): skip a literal whole.
                    let rest: String = chars.clone().take(3).collect();
                    if rest.starts_with('\\') {
                        while let Some(c) = chars.next() {
                            if c == '\'' {
                                break;
                            }
                        }
                    } else if rest.chars().nth(1) == Some('\'') {
                        chars.next();
                        chars.next();
                    }
                }
                '{' if !in_str => {
                    depth += 1;
                    opened = true;
                }
                '}' if !in_str => {
                    depth -= 1;
                    if opened && depth == 0 {
                        return Some(j);
                    }
                }
                ';' if !in_str && !opened => return None,
                _ => {}
            }
        }
    }
    None
}

#[test]
fn the_function_scanner_measures_a_function() {
    let text = "fn a() {\n    let s = \"{\";\n    let c = '}';\n}\nfn b();\npub(crate) fn c<'a>(x: &'a str) {\n}\n";
    assert_eq!(
        functions(text),
        vec![("a".to_string(), 1, 4), ("c".to_string(), 6, 2)]
    );
}

#[test]
fn no_function_is_over_70_lines_unless_listed() {
    let root = workspace();
    let list_path = root.join("crates/reclaimsim/tests/tidy-long-functions.txt");
    let listed: BTreeSet<String> = fs::read_to_string(&list_path)
        .unwrap()
        .lines()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect();
    let mut files = Vec::new();
    for krate in fs::read_dir(root.join("crates")).unwrap() {
        rust_files(&krate.unwrap().path().join("src"), &mut files);
    }
    let mut long = BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap().display().to_string();
        for (name, line, len) in functions(&fs::read_to_string(f).unwrap()) {
            if len > MAX_FN_LINES {
                long.insert(format!("{rel}::{name}"), (line, len));
            }
        }
    }
    let new: Vec<String> = (long.iter())
        .filter(|(k, _)| !listed.contains(*k))
        .map(|(k, (line, len))| format!("{k} (line {line}): {len} lines"))
        .collect();
    let stale: Vec<&String> = listed.iter().filter(|k| !long.contains_key(*k)).collect();
    assert!(
        new.is_empty(),
        "functions over {MAX_FN_LINES} lines (split them, or list them in {}):\n{}",
        list_path.display(),
        new.join("\n")
    );
    assert!(
        stale.is_empty(),
        "listed as over {MAX_FN_LINES} lines but no longer are (take them off the list): {stale:?}"
    );
}
