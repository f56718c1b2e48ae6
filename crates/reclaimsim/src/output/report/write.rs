//! Writing a file whole or not at all: the results as JSON, or any bytes.

use std::io::{self, Write};
use std::path::Path;

/// Write `r` as pretty JSON to `path`, whole or not at all (`write_atomic`).
pub fn write_json<T: serde::Serialize>(r: &T, path: &Path) -> io::Result<()> {
    let mut text = serde_json::to_vec_pretty(r)?;
    text.push(b'\n');
    write_atomic(path, &text)
}

/// Write `bytes` to `path` through a temporary file in the same directory renamed into
/// place, so that `path` is either complete or untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a file name", path.display()),
        )
    })?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let write = || -> io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::report::tests::variant;
    use crate::results::RunResult;

    #[test]
    fn json_is_written_whole_or_not_at_all() {
        let dir = std::env::temp_dir().join(format!("reclaimsim-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.json");
        let r = RunResult {
            scenario: "s".into(),
            description: String::new(),
            seed: 3,
            variants: vec![variant("a", 1.0, 1)],
            sensitivity: None,
        };
        write_json(&r, &path).unwrap();
        let back: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(back["seed"], 3);
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "no temporary file left"
        );
        assert!(write_json(&r, &dir.join("missing").join("out.json")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
