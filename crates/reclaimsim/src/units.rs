//! Sizes and durations as scenario files write them: `"4GiB"`, `"960m"`, `4096`; `"10s"`,
//! `"500ms"`, `2.5` (seconds).

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;

pub const PAGE_SIZE: u64 = 4096;

/// A size in bytes. Accepts an integer (bytes) or a string with a binary suffix
/// (`k`/`KiB`, `m`/`MiB`, `g`/`GiB`, `t`/`TiB`, `p`/`PiB`; fio and memtier use single
/// letters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct ByteSize(pub u64);

impl ByteSize {
    pub fn pages(self) -> u64 {
        self.0.div_ceil(PAGE_SIZE)
    }
}

pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a size (e.g. 4GiB, 960m, 4096)"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        "p" | "pb" | "pib" => 1 << 50,
        _ => {
            return Err(format!(
                "`{s}` has an unknown size unit `{unit}` (use KiB, MiB, GiB, TiB, PiB)"
            ))
        }
    };
    let v = n * mult as f64;
    if !v.is_finite() || v < 0.0 || v > (1u64 << 62) as f64 {
        return Err(format!("`{s}` is out of range"));
    }
    Ok(v.round() as u64)
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ByteSize;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size: bytes as an integer, or a string such as \"4GiB\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ByteSize, E> {
                u64::try_from(v)
                    .map(ByteSize)
                    .map_err(|_| E::custom("a size cannot be negative"))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ByteSize, E> {
                Ok(ByteSize(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ByteSize, E> {
                parse_size(v).map(ByteSize).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// A virtual duration in nanoseconds. Accepts a number of seconds or a string with a
/// unit (`ns`, `us`, `ms`, `s`, `m`, `h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Duration(pub u64);

impl Duration {
    pub fn secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
}

pub fn parse_duration(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a duration (e.g. 10s, 500ms)"))?;
    let mult = match unit.trim() {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "" | "s" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        _ => {
            return Err(format!(
                "`{s}` has an unknown time unit `{unit}` (use ns, us, ms, s, m, h)"
            ))
        }
    };
    let v = n * mult;
    if !v.is_finite() || !(0.0..=1e18).contains(&v) {
        return Err(format!("`{s}` is out of range"));
    }
    Ok(v.round() as u64)
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Duration;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration: seconds as a number, or a string such as \"500ms\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Duration, E> {
                if v < 0 {
                    return Err(E::custom("a duration cannot be negative"));
                }
                Ok(Duration(v as u64 * 1_000_000_000))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Duration, E> {
                Ok(Duration(v.saturating_mul(1_000_000_000)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Duration, E> {
                parse_duration(&format!("{v}"))
                    .map(Duration)
                    .map_err(E::custom)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Duration, E> {
                parse_duration(v).map(Duration).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// Bytes with a binary unit: `512 B`, `16.0 MiB`, `4.00 GiB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut x = n as f64 / 1024.0;
    let mut unit = 0;
    while x >= 1024.0 && unit + 1 < UNITS.len() {
        x /= 1024.0;
        unit += 1;
    }
    format!("{x:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4GiB").unwrap(), 4 << 30);
        assert_eq!(parse_size("960m").unwrap(), 960 << 20);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("1PiB").unwrap(), parse_size("1024TiB").unwrap());
        assert!(parse_size("1EiB").unwrap_err().contains("TiB, PiB)"));
        assert!(parse_size("-1").is_err());
        assert!(parse_size("3 parsecs").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s").unwrap(), 10_000_000_000);
        assert_eq!(parse_duration("500ms").unwrap(), 500_000_000);
        assert_eq!(parse_duration("1.5").unwrap(), 1_500_000_000);
        assert!(parse_duration("5 fortnights").is_err());
    }
}
