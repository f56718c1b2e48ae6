//! docs/reference/cli.md, rendered from the clap definitions (`cli.rs`): every
//! subcommand with its usage, arguments and options. The test fails when the committed
//! page differs; `RECLAIMSIM_BLESS=1` rewrites it.

use crate::cli::Cli;
use clap::{Arg, ArgAction, Command, CommandFactory};
use std::fmt::Write;
use std::path::PathBuf;

/// How to regenerate the page, as the page and the test's failure say it.
const REGENERATE: &str =
    "RECLAIMSIM_BLESS=1 cargo test --profile checked -p reclaimsim-cli --bin reclaimsim cli_reference";

fn page_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/reference/cli.md")
}

/// The whole page.
fn render() -> String {
    let mut cmd = Cli::command();
    cmd.build();
    let mut out = String::new();
    writeln!(out, "# Command-line reference\n").unwrap();
    writeln!(
        out,
        "<!-- Generated from crates/reclaimsim-cli/src/cli.rs (clidoc.rs); do not edit. \
         Regenerate: {REGENERATE} -->\n"
    )
    .unwrap();
    let about = sentence(&cmd.get_about().map(|a| a.to_string()).unwrap_or_default());
    writeln!(
        out,
        "{about} Every subcommand also takes `-h, --help`; `reclaimsim --version` prints \
         the version. What the commands do, with examples, is in [The \
         commands](../guide/commands.md); exit codes and errors in [Exit codes and error \
         formats](errors.md).\n"
    )
    .unwrap();
    let subs: Vec<&Command> = cmd.get_subcommands().filter(|s| shown(s)).collect();
    for sub in &subs {
        let name = sub.get_name();
        writeln!(out, "- [`{name}`](#reclaimsim-{name})").unwrap();
    }
    out.push('\n');
    for sub in subs {
        subcommand(&mut out, sub);
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

/// clap's own `help` subcommand and hidden ones are left out.
fn shown(sub: &Command) -> bool {
    sub.get_name() != "help" && !sub.is_hide_set()
}

/// One subcommand's section: what it does, its usage, its arguments and options.
fn subcommand(out: &mut String, sub: &Command) {
    let name = sub.get_name();
    writeln!(out, "## reclaimsim {name}\n").unwrap();
    let about = sub.get_long_about().or(sub.get_about());
    if let Some(about) = about {
        writeln!(out, "{}\n", sentence(&about.to_string())).unwrap();
    }
    let usage = sub.clone().render_usage().to_string();
    let usage = usage.trim_start_matches("Usage: ");
    writeln!(out, "```\n{usage}\n```\n").unwrap();
    let args: Vec<&Arg> = sub
        .get_arguments()
        .filter(|a| !a.is_hide_set() && a.get_id() != "help" && a.get_id() != "version")
        .collect();
    let (positional, options): (Vec<&Arg>, Vec<&Arg>) =
        args.into_iter().partition(|a| a.is_positional());
    for (title, list) in [("Arguments", positional), ("Options", options)] {
        if list.is_empty() {
            continue;
        }
        writeln!(out, "{title}:\n").unwrap();
        for arg in list {
            writeln!(out, "- {}", entry(arg)).unwrap();
        }
        out.push('\n');
    }
}

/// An argument's line: its name as typed, then its help and what clap knows of it.
fn entry(arg: &Arg) -> String {
    let values: Vec<String> = (arg.get_value_names().unwrap_or_default())
        .iter()
        .map(|v| format!("<{v}>"))
        .collect();
    let values = values.join(" ");
    let optional_value = arg.get_num_args().is_some_and(|n| n.min_values() == 0);
    let takes = arg.get_action().takes_values();
    let typed = if arg.is_positional() {
        values
    } else {
        let mut names = Vec::new();
        names.extend(arg.get_short().map(|s| format!("-{s}")));
        names.extend(arg.get_long().map(|l| format!("--{l}")));
        let names = names.join(", ");
        match (takes, optional_value) {
            (false, _) => names,
            (true, false) => format!("{names} {values}"),
            (true, true) => format!("{names} [{values}]"),
        }
    };
    let mut line = format!("`{typed}`");
    let notes = notes(arg, takes && !optional_value);
    if !notes.is_empty() {
        write!(line, " ({})", notes.join("; ")).unwrap();
    }
    if let Some(help) = arg.get_long_help().or(arg.get_help()) {
        write!(line, ": {}", sentence(&help.to_string())).unwrap();
    }
    line
}

/// What clap knows of an argument beside its help: required, repeatable, its delimiter
/// and its default (`with_default`: when it takes a value that must be given).
fn notes(arg: &Arg, with_default: bool) -> Vec<String> {
    let mut notes = Vec::new();
    if arg.is_required_set() {
        notes.push("required".to_string());
    }
    if matches!(arg.get_action(), ArgAction::Append) {
        notes.push("repeatable".to_string());
    }
    if let Some(d) = arg.get_value_delimiter() {
        notes.push(format!("values separated by `{d}`"));
    }
    let defaults: Vec<String> = (arg.get_default_values().iter())
        .map(|d| d.to_string_lossy().into_owned())
        .filter(|d| !d.is_empty())
        .collect();
    if with_default && !defaults.is_empty() {
        notes.push(format!("default `{}`", defaults.join(",")));
    }
    notes
}

/// Help text on one line (clap's doc comments wrap), so that a list item stays one, with
/// the full stop clap takes off a one-sentence help.
fn sentence(text: &str) -> String {
    let mut s = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if !s.is_empty() && !s.ends_with('.') {
        s.push('.');
    }
    s
}

#[test]
fn cli_reference_is_current() {
    let path = page_path();
    let want = render();
    if std::env::var_os("RECLAIMSIM_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have != want {
        let line = (have.lines().zip(want.lines()))
            .position(|(a, b)| a != b)
            .unwrap_or(have.lines().count().min(want.lines().count()));
        panic!(
            "docs/reference/cli.md is not what the clap definitions give (first difference \
             at line {}); regenerate it: {REGENERATE}",
            line + 1
        );
    }
}
