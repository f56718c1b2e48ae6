//! Reading an `[[event]]`: which write it is (an lru_gen command, a memcg file, a
//! sysctl), its value in the kernel's units, and the command line a user would type for
//! it (the results' `command`).

use crate::kernel::control::{MemcgFile, Sysctl};
use crate::kernel::lru::mglru::debugfs::{self, LruGenCmd};
use crate::scenario::config::EventConfig;
use crate::units::{parse_size, PAGE_SIZE};

/// The memcg files an event may write.
pub const FILES: [&str; 7] = [
    "memory.high",
    "memory.max",
    "memory.low",
    "memory.min",
    "memory.reclaim",
    "memory.swap.max",
    "memory.zswap.max",
];

/// The sysctls an event may write.
pub const SYSCTLS: [&str; 7] = [
    "vm.swappiness",
    "vm.watermark_scale_factor",
    "lru_gen.min_ttl_ms",
    "zram.idle",
    "zram.writeback",
    "zram.writeback_limit_enable",
    "zram.writeback_limit",
];

/// The modes /sys/block/zram0/writeback takes in 6.1 (its `page_index=` form is not
/// modelled; "incompressible" came with the recompression work after 6.1).
pub const WRITEBACK_MODES: [&str; 3] = ["idle", "huge", "huge_idle"];

/// What an event writes; a memcg still by its path.
#[derive(Clone, Debug, PartialEq)]
pub enum EventWrite {
    LruGen(Vec<LruGenCmd>),
    Memcg { path: String, file: MemcgFile },
    Sysctl(Sysctl),
}

/// An event read: the write, and how a user would type it.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedEvent {
    pub write: EventWrite,
    pub shown: String,
}

/// A problem with an event: the key it is about and what is wrong.
pub type EventProblem = (&'static str, String);

/// Reads an event: exactly one of `command`, `file` (with `memcg`) and `sysctl`, and a
/// `value` with the last two only.
pub fn parse(ev: &EventConfig) -> Result<ParsedEvent, EventProblem> {
    let given = [
        ("command", ev.command.is_some()),
        ("file", ev.file.is_some()),
        ("sysctl", ev.sysctl.is_some()),
    ];
    let mut which = given.iter().filter(|(_, g)| *g).map(|(k, _)| *k);
    let (Some(kind), None) = (which.next(), which.next()) else {
        let second = given.iter().filter(|(_, g)| *g).nth(1);
        let key = second.map_or("command", |(k, _)| *k);
        return Err((
            key,
            "an event needs exactly one of `command` (lru_gen), `file` (with `memcg`) \
             and `sysctl`"
                .into(),
        ));
    };
    if ev.memcg.is_some() && kind != "file" {
        return Err(("memcg", "`memcg` goes with `file` only".into()));
    }
    match kind {
        "command" => lru_gen(ev),
        "file" => memcg_file(ev),
        _ => sysctl(ev),
    }
}

fn lru_gen(ev: &EventConfig) -> Result<ParsedEvent, EventProblem> {
    if ev.value.is_some() {
        return Err(("value", "an lru_gen `command` takes no `value`".into()));
    }
    let command = ev.command.clone().unwrap_or_default();
    let cmds = debugfs::parse_commands(&command).map_err(|e| ("command", e))?;
    Ok(ParsedEvent {
        write: EventWrite::LruGen(cmds),
        shown: command,
    })
}

/// The event's `value` as text, which `file` and `sysctl` need.
fn value(ev: &EventConfig) -> Result<String, EventProblem> {
    match &ev.value {
        Some(v) => Ok(v.text().trim().to_string()),
        None => Err(("value", "a `file` or `sysctl` event needs a `value`".into())),
    }
}

fn memcg_file(ev: &EventConfig) -> Result<ParsedEvent, EventProblem> {
    let name = ev.file.as_deref().unwrap_or_default();
    if !FILES.contains(&name) {
        return Err((
            "file",
            format!("unknown file \"{name}\" (one of {})", FILES.join(", ")),
        ));
    }
    let Some(path) = ev.memcg.clone() else {
        return Err(("memcg", "a `file` event needs the `memcg` it writes".into()));
    };
    let text = value(ev)?;
    let (file, written) = if name == "memory.reclaim" {
        reclaim_value(&text)?
    } else {
        let (pages, written) = size_or_max(&text, true)?;
        let file = match name {
            "memory.high" => MemcgFile::High(pages),
            "memory.max" => MemcgFile::Max(pages),
            "memory.low" => MemcgFile::Low(pages),
            "memory.swap.max" => MemcgFile::SwapMax(pages),
            "memory.zswap.max" => MemcgFile::ZswapMax(pages),
            _ => MemcgFile::Min(pages),
        };
        (file, written)
    };
    let dir = path.trim_end_matches('/');
    Ok(ParsedEvent {
        shown: format!("echo {written} > {dir}/{name}"),
        write: EventWrite::Memcg { path, file },
    })
}

/// A size in pages (rounded down, as page_counter_memparse() does) or, if `max_ok`,
/// "max"; with the value as the kernel's memparse() syntax writes it (`64M`).
fn size_or_max(text: &str, max_ok: bool) -> Result<(u64, String), EventProblem> {
    if text == "max" {
        return match max_ok {
            true => Ok((u64::MAX, "max".into())),
            false => Err(("value", "memory.reclaim takes a size, not \"max\"".into())),
        };
    }
    let bytes = parse_size(text).map_err(|e| ("value", e))?;
    Ok((bytes / PAGE_SIZE, memparse_form(bytes)))
}

/// `bytes` with the largest suffix of memparse() that divides it (`64M`, `1G`).
fn memparse_form(bytes: u64) -> String {
    for (suffix, shift) in [("T", 40), ("G", 30), ("M", 20), ("K", 10)] {
        if bytes > 0 && bytes % (1u64 << shift) == 0 {
            return format!("{}{suffix}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// memory.reclaim's value: a size, then optionally `swappiness=N` (0..=200), the
/// argument kernels from 6.13 accept.
fn reclaim_value(text: &str) -> Result<(MemcgFile, String), EventProblem> {
    let mut words = text.split_whitespace();
    let (pages, mut written) = size_or_max(words.next().unwrap_or(""), false)?;
    let mut swappiness = None;
    for w in words {
        let n = w
            .strip_prefix("swappiness=")
            .and_then(|n| n.parse::<u32>().ok())
            .filter(|&n| n <= 200 && swappiness.is_none())
            .ok_or_else(|| {
                (
                    "value",
                    format!(
                        "`{w}`: after the size, memory.reclaim takes one `swappiness=N`, N \
                         0 to 200 (a 6.13+ argument)"
                    ),
                )
            })?;
        swappiness = Some(n);
        written = format!("\"{written} swappiness={n}\"");
    }
    Ok((MemcgFile::Reclaim { pages, swappiness }, written))
}

fn sysctl(ev: &EventConfig) -> Result<ParsedEvent, EventProblem> {
    let name = ev.sysctl.as_deref().unwrap_or_default();
    let text = value(ev)?;
    let number = |lo: u64, hi: u64| {
        text.parse::<u64>()
            .ok()
            .filter(|n| (lo..=hi).contains(n))
            .ok_or_else(|| ("value", format!("`{text}`: {name} takes {lo} to {hi}")))
    };
    let (write, shown) = match name {
        "vm.swappiness" => {
            let n = number(0, 200)?;
            (Sysctl::Swappiness(n as u32), format!("sysctl {name}={n}"))
        }
        "vm.watermark_scale_factor" => {
            let n = number(1, 3000)?;
            (
                Sysctl::WatermarkScaleFactor(n),
                format!("sysctl {name}={n}"),
            )
        }
        "lru_gen.min_ttl_ms" => {
            let n = number(0, u64::from(u32::MAX))?;
            let shown = format!("echo {n} > /sys/kernel/mm/lru_gen/min_ttl_ms");
            (Sysctl::MinTtlMs(n), shown)
        }
        _ if name.starts_with("zram.") && SYSCTLS.contains(&name) => zram_file(name, &text)?,
        _ => {
            return Err((
                "sysctl",
                format!("unknown sysctl \"{name}\" (one of {})", SYSCTLS.join(", ")),
            ))
        }
    };
    Ok(ParsedEvent {
        write: EventWrite::Sysctl(write),
        shown,
    })
}

/// A write to one of zram's sysfs files (`zram.NAME`: /sys/block/zram0/NAME), the value
/// checked as 6.1's store function checks it.
fn zram_file(name: &str, text: &str) -> Result<(Sysctl, String), EventProblem> {
    use crate::kernel::zram::WritebackMode;
    let file = name.trim_start_matches("zram.");
    let shown = format!("echo {text} > /sys/block/zram0/{file}");
    let write = match file {
        // idle_store(): "all" (an age in seconds needs CONFIG_ZRAM_MEMORY_TRACKING,
        // which the model does not have).
        "idle" if text == "all" => Sysctl::ZramIdle,
        "idle" => return Err(("value", format!("`{text}`: zram.idle takes \"all\""))),
        "writeback" => Sysctl::ZramWriteback(match text {
            "idle" => WritebackMode::Idle,
            "huge" => WritebackMode::Huge,
            "huge_idle" => WritebackMode::HugeIdle,
            _ => {
                return Err((
                    "value",
                    format!(
                        "`{text}`: zram.writeback takes one of {} (6.1's modes; its \
                         page_index= form is not modelled)",
                        WRITEBACK_MODES.join(", ")
                    ),
                ))
            }
        }),
        "writeback_limit_enable" => match text {
            "0" => Sysctl::ZramWritebackLimitEnable(false),
            "1" => Sysctl::ZramWritebackLimitEnable(true),
            _ => return Err(("value", format!("`{text}`: {name} takes 0 or 1"))),
        },
        _ => match text.parse::<u64>() {
            Ok(n) => Sysctl::ZramWritebackLimit(n),
            Err(_) => {
                return Err((
                    "value",
                    format!("`{text}`: {name} takes a number of 4 KiB pages"),
                ))
            }
        },
    };
    Ok((write, shown))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memparse_form_uses_the_largest_exact_suffix() {
        assert_eq!(memparse_form(64 << 20), "64M");
        assert_eq!(memparse_form(3 << 30), "3G");
        assert_eq!(memparse_form(1536 << 10), "1536K");
        assert_eq!(memparse_form(100), "100");
    }

    #[test]
    fn reclaim_value_takes_a_swappiness() {
        let (f, w) = reclaim_value("32MiB swappiness=0").unwrap();
        assert_eq!(
            f,
            MemcgFile::Reclaim {
                pages: 32 << 8,
                swappiness: Some(0)
            }
        );
        assert_eq!(w, "\"32M swappiness=0\"");
        assert!(reclaim_value("32MiB swappiness=201").is_err());
        assert!(reclaim_value("max").is_err());
    }
}
