//! Checks on the documentation, without mdbook: the book's table of contents
//! (docs/SUMMARY.md) lists every page under docs/ and no page that does not exist; every
//! relative Markdown link in README.md, ARCHITECTURE.md and docs/**/*.md reaches a file
//! (source files under crates/ included), and every `#anchor` in such a link names a
//! heading of its target, by the slug rules GitHub and mdBook share; the book's
//! preprocessor (tools/book-links.py) makes every link out of docs/ reach its file from
//! the rendered page; the README stays short.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Component, Path, PathBuf};

/// The README's length limit (issue 22: "at most ~200 lines").
const README_MAX_LINES: usize = 220;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// `path` with `.` and `..` folded away (the file need not exist).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

fn md_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        // docs/book/ is mdbook's output (book.toml's build-dir), not a page.
        if p.is_dir() && p == workspace().join("docs/book") {
            continue;
        }
        if p.is_dir() {
            md_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "md") {
            out.push(p);
        }
    }
}

/// The heading slug GitHub and mdBook give an anchor: lowercase, each space a '-',
/// every other character that is not alphanumeric, '-' or '_' dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .chars()
        .flat_map(char::to_lowercase)
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The text's lines with fenced code blocks blanked (their lines kept, empty, so that
/// line numbers hold).
fn outside_fences(text: &str) -> Vec<&str> {
    let mut fence: Option<&str> = None;
    text.lines()
        .map(|line| {
            let t = line.trim_start();
            let mark = ["```", "~~~"].into_iter().find(|m| t.starts_with(m));
            match (fence, mark) {
                (None, Some(m)) => {
                    fence = Some(m);
                    ""
                }
                (Some(f), Some(m)) if f == m => {
                    fence = None;
                    ""
                }
                (Some(_), _) => "",
                (None, None) => line,
            }
        })
        .collect()
}

/// The anchors of a Markdown file's headings (ATX `#` headings outside code blocks),
/// a repeated heading getting `-1`, `-2`... as on GitHub and in mdBook.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for line in outside_fences(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if hashes == 0 || hashes > 6 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let title = line[hashes..].trim().trim_end_matches('#').trim();
        let base = slug(title);
        let n = seen.entry(base.clone()).or_insert(0);
        out.insert(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    out
}

/// The text outside code: fenced blocks and inline code spans (which may run over a
/// line break) replaced by spaces, newlines kept.
fn prose(text: &str) -> String {
    let joined = outside_fences(text).join("\n");
    let chars: Vec<char> = joined.chars().collect();
    let mut out = String::with_capacity(joined.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|&&c| c == '`').count();
        // The closing run: exactly as many backticks.
        let mut j = i + run;
        let mut close = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let r = chars[j..].iter().take_while(|&&c| c == '`').count();
                if r == run {
                    close = Some(j + r);
                    break;
                }
                j += r;
            } else {
                j += 1;
            }
        }
        let end = close.unwrap_or(i + run);
        for &c in &chars[i..end] {
            out.push(if c == '\n' { '\n' } else { ' ' });
        }
        i = end;
    }
    out
}

/// A link found in a page: its line, its target as written, and whether it is an image.
struct Link {
    line: usize,
    target: String,
    image: bool,
}

/// Every inline link `[text](target)` and image `![alt](target)` outside code.
fn links(text: &str) -> Vec<Link> {
    let mut out = Vec::new();
    for (n, line) in prose(text).lines().enumerate() {
        let mut rest = line;
        let mut offset = 0;
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let end = after.find(')').unwrap_or(after.len());
            let mut target = after[..end].trim();
            // An optional title: `(path "title")`.
            if let Some(sp) = target.find(' ') {
                target = &target[..sp];
            }
            let target = target.trim_start_matches('<').trim_end_matches('>');
            let before = &line[..offset + i];
            let image = before
                .rfind('[')
                .is_some_and(|b| b > 0 && before.as_bytes()[b - 1] == b'!');
            out.push(Link {
                line: n + 1,
                target: target.to_string(),
                image,
            });
            offset += i + 2 + end;
            rest = &rest[i + 2 + end..];
        }
    }
    out
}

fn is_external(target: &str) -> bool {
    target.contains("://") || target.starts_with("mailto:")
}

/// The pages whose links are checked: README.md, ARCHITECTURE.md, docs/**/*.md.
fn pages(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    md_files(&root.join("docs"), &mut files);
    files
}

/// What is wrong with one link of `page`, if anything.
fn check_link(page: &Path, link: &Link) -> Option<String> {
    let (path, anchor) = match link.target.split_once('#') {
        Some((p, a)) => (p, Some(a)),
        None => (link.target.as_str(), None),
    };
    let target = if path.is_empty() {
        page.to_path_buf()
    } else {
        normalize(&page.parent().unwrap().join(path))
    };
    if !target.exists() {
        return Some(format!("{}: no such file", link.target));
    }
    let anchor = anchor.filter(|a| !a.is_empty())?;
    if target.extension().is_none_or(|e| e != "md") {
        return Some(format!(
            "{}: an anchor into a file that is not Markdown",
            link.target
        ));
    }
    let text = fs::read_to_string(&target).unwrap();
    if anchors(&text).contains(anchor) {
        None
    } else {
        Some(format!(
            "{}: no heading has the anchor #{anchor}",
            link.target
        ))
    }
}

#[test]
fn slugs_follow_github_and_mdbook() {
    assert_eq!(slug("18. Not modelled"), "18-not-modelled");
    assert_eq!(
        slug("13.4 Reclaim entry points (`mod.rs`)"),
        "134-reclaim-entry-points-modrs"
    );
    assert_eq!(
        slug("Progress, long runs, Ctrl-C and exit status"),
        "progress-long-runs-ctrl-c-and-exit-status"
    );
    assert_eq!(slug("Results (`--json`)"), "results---json");
    assert_eq!(
        slug("page_fault3 (will-it-scale)"),
        "page_fault3-will-it-scale"
    );
    assert_eq!(slug("  Émile's **bold** heading  "), "émiles-bold-heading");
    let text = "# A\n## A\n```\n# not a heading\n```\n### A ###\n#no\n";
    let got: Vec<String> = anchors(text).into_iter().collect();
    assert_eq!(got, ["a", "a-1", "a-2"]);
    let ls = links("see [x](a.md#b) and `[y](c.md)` and ![p](i.png \"t\")\n```\n[z](d.md)\n```\n");
    let got: Vec<(&str, bool)> = ls.iter().map(|l| (l.target.as_str(), l.image)).collect();
    assert_eq!(got, [("a.md#b", false), ("i.png", true)]);
}

#[test]
fn summary_lists_every_page_of_the_book() {
    let root = workspace();
    let docs = root.join("docs");
    let summary = docs.join("SUMMARY.md");
    let text = fs::read_to_string(&summary).expect("docs/SUMMARY.md");
    let mut listed = BTreeSet::new();
    let mut bad = Vec::new();
    for link in links(&text) {
        if is_external(&link.target) {
            continue;
        }
        let path = link.target.split('#').next().unwrap();
        if path.is_empty() {
            bad.push(format!("SUMMARY.md:{}: a chapter with no page", link.line));
            continue;
        }
        let p = normalize(&docs.join(path));
        if !p.is_file() {
            bad.push(format!("SUMMARY.md:{}: {path}: no such page", link.line));
        }
        if !p.starts_with(&docs) {
            bad.push(format!("SUMMARY.md:{}: {path}: not under docs/", link.line));
        }
        listed.insert(p);
    }
    let mut files = Vec::new();
    md_files(&docs, &mut files);
    for f in files {
        if f != summary && !listed.contains(&f) {
            let rel = f.strip_prefix(&root).unwrap();
            bad.push(format!("{}: not listed in docs/SUMMARY.md", rel.display()));
        }
    }
    assert!(
        bad.is_empty(),
        "the book's table of contents:\n{}",
        bad.join("\n")
    );
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let root = workspace();
    let mut bad = Vec::new();
    let mut checked = 0;
    for page in pages(&root) {
        let text = fs::read_to_string(&page).unwrap();
        let rel = page.strip_prefix(&root).unwrap().display().to_string();
        for link in links(&text) {
            if is_external(&link.target) {
                continue;
            }
            checked += 1;
            if let Some(e) = check_link(&page, &link) {
                bad.push(format!("{rel}:{}: {e}", link.line));
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} links found: is the parser broken?"
    );
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
}

/// The `href`s of the HTML anchors in `text`.
fn hrefs(text: &str) -> Vec<String> {
    text.split("<a href=\"")
        .skip(1)
        .map(|s| s[..s.find('"').unwrap()].to_string())
        .collect()
}

/// Each page as the book renders it: tools/book-links.py turns a link leaving docs/ into
/// an anchor relative to the page under docs/book/, which must reach the same file; a
/// link to a README.md of the book goes to the index.md mdBook renders it as.
#[test]
fn the_rendered_book_reaches_the_checkout() {
    let root = workspace();
    let docs = root.join("docs");
    let (mut bad, mut outside) = (Vec::new(), 0);
    let mut files = Vec::new();
    md_files(&docs, &mut files);
    // SUMMARY.md is mdBook's table of contents, read by mdBook itself, not a chapter.
    for page in files.into_iter().filter(|f| !f.ends_with("SUMMARY.md")) {
        let dir = page.parent().unwrap().strip_prefix(&docs).unwrap();
        let out = std::process::Command::new("python3")
            .current_dir(&root)
            .args(["tools/book-links.py", "rewrite"])
            .arg(dir)
            .arg(&page)
            .output()
            .expect("python3 runs tools/book-links.py");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let rel = page.strip_prefix(&root).unwrap().display().to_string();
        for link in links(&text).iter().filter(|l| !is_external(&l.target)) {
            let path = link.target.split('#').next().unwrap();
            let target = normalize(&page.parent().unwrap().join(path));
            if !target.starts_with(&docs) {
                bad.push(format!(
                    "{rel}:{}: {} left as a link",
                    link.line, link.target
                ));
            }
            if path.ends_with("README.md") {
                bad.push(format!(
                    "{rel}:{}: {} not sent to index.md",
                    link.line, link.target
                ));
            }
        }
        for href in hrefs(&text) {
            outside += 1;
            let path = href.split('#').next().unwrap().replace("%2E", ".");
            let rendered = docs.join("book").join(dir);
            if !normalize(&rendered.join(&path)).exists() {
                bad.push(format!(
                    "{rel}: {href} does not reach a file from docs/book/"
                ));
            }
        }
    }
    assert!(outside > 50, "only {outside} links out of docs/ rewritten");
    assert!(
        bad.is_empty(),
        "the rendered book's links:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_readme_is_short() {
    let text = fs::read_to_string(workspace().join("README.md")).unwrap();
    let n = text.lines().count();
    assert!(
        n <= README_MAX_LINES,
        "README.md has {n} lines, more than {README_MAX_LINES}: move the detail into the guide (docs/)"
    );
}
