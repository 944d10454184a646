//! A report read from outside (`show`, `apply`, `merge`): an untrusted file, read up to a size bound and parsed straight into its type (`Document`) with serde_json's nesting bound, refused in one sentence.

use std::io::Read;
use std::path::Path;

use anyhow::{anyhow, bail, Result};
use serde::de::DeserializeOwned;

/// Far more than any report mutdelta writes: one of 20,000 added lines is a few megabytes.
pub const LARGEST_REPORT: u64 = 256 << 20;

/// The report at `path` as `T`; `what` names it in errors ("the shard report"), `advice` says
/// what to give instead.
pub fn read<T: DeserializeOwned>(path: &Path, what: &str, advice: &str) -> Result<T> {
    let bytes = read_bounded(path, what, LARGEST_REPORT)?;
    serde_json::from_slice(&bytes)
        .map_err(|err| anyhow!("{what} {} is not a mutdelta JSON report ({err}): {advice}", path.display()))
}

/// The bytes of `path`, refused past `limit` bytes (also when it is a pipe or a device that
/// never ends).
fn read_bounded(path: &Path, what: &str, limit: u64) -> Result<Vec<u8>> {
    let file = std::fs::File::open(path)
        .map_err(|err| anyhow!("could not read {what} {}: {err}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| anyhow!("could not read {what} {}: {err}", path.display()))?;
    if bytes.len() as u64 > limit {
        bail!(
            "{what} {} is larger than {} MiB, more than any report mutdelta writes: give the file `check --json` wrote",
            path.display(),
            limit >> 20
        );
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::document::Document;

    fn read_text(text: &[u8]) -> Result<serde_json::Value> {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), text).unwrap();
        read(file.path(), "the report", "give another")
    }

    #[test]
    fn a_truncated_deeply_nested_or_non_utf8_report_is_refused_in_one_sentence() {
        for bad in [&b"{\"files\": {\"a.py\": "[..], &"[".repeat(100_000).into_bytes(), b"\"\xff\xfe\""] {
            let err = read_text(bad).unwrap_err().to_string();
            assert!(err.contains("is not a mutdelta JSON report") && !err.contains('\n'), "{err}");
        }
        assert!(read_text(b"{\"files\": {}}").is_ok());
    }

    #[test]
    fn a_report_with_fields_of_the_wrong_type_or_nested_deep_where_nothing_reads_is_refused_in_one_sentence()
    {
        let deep = [&b"{\"files\": {}, \"extra\": "[..], &"[".repeat(100_000).into_bytes()].concat();
        for bad in [
            &br#"{"files": [1, 2]}"#[..],
            br#"{"files": {}, "mutdelta": {"shard": {"index": "0", "count": 2}}}"#,
            br#"{"files": {"a.py": {"mutants": [{"id": 1}]}}}"#,
            br#"{"mutdelta": {}}"#,
            &deep,
        ] {
            let file = tempfile::NamedTempFile::new().unwrap();
            std::fs::write(file.path(), bad).unwrap();
            let err = read::<Document>(file.path(), "the report", "give another").unwrap_err().to_string();
            assert!(err.contains("is not a mutdelta JSON report") && !err.contains('\n'), "{err}");
        }
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), br#"{"files": {}, "mutdelta": {"shard": {"index": 0, "count": 2}}}"#)
            .unwrap();
        let read: Document = read(file.path(), "the report", "give another").unwrap();
        assert_eq!(read.mutdelta.shard.map(|shard| (shard.index, shard.count)), Some((0, 2)));
    }

    #[test]
    fn a_file_of_exactly_the_bound_is_read_and_one_byte_more_is_refused() {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), vec![b' '; 1 << 20]).unwrap();
        assert_eq!(read_bounded(file.path(), "the report", 1 << 20).unwrap().len(), 1 << 20);
        std::fs::write(file.path(), vec![b' '; (1 << 20) + 1]).unwrap();
        assert!(read_bounded(file.path(), "the report", 1 << 20).is_err());
    }

    #[test]
    fn a_device_that_never_ends_is_read_only_up_to_the_bound() {
        let err = read_bounded(Path::new("/dev/zero"), "the report", 1 << 20).unwrap_err();
        assert!(err.to_string().contains("is larger than 1 MiB"), "{err}");
    }
}
