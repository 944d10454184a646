//! The GitHub Action's install step against a release served over real HTTP: the released
//! executable of the action's own version taken when the action runs at that release, checked
//! against the release's `SHA256SUMS`, and a build from source everywhere else.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::action::{run_action_with_env, ActionRun};
use crate::common::action_tools;

const VERSION: &str = env!("CARGO_PKG_VERSION");
const REPOSITORY: &str = "example-org/mutdelta";
/// What the release's COMMIT file holds: the commit the release was built from.
const RELEASED_COMMIT: &str = "4a3f9c0d2b7e6a1f8c5d3e9b0a7f6e5d4c3b2a19";

fn archive_name() -> String {
    format!("mutdelta-{VERSION}-x86_64-unknown-linux-musl.tar.gz")
}

/// A release directory served by Python's `http.server` on a free local port, laid out as
/// GitHub serves release assets (`<server>/<owner>/<name>/releases/download/<tag>/<file>`).
struct ReleaseServer {
    root: tempfile::TempDir,
    server: Child,
    port: u16,
    requests: PathBuf,
}

impl ReleaseServer {
    /// A server of release `v<VERSION>` holding `files`, with a `SHA256SUMS` over them written
    /// by `sha256sum` as the release workflow writes it (none when `files` is empty: no release).
    fn serve(files: &[(&str, Vec<u8>)]) -> ReleaseServer {
        let root = tempfile::Builder::new().prefix("release-server-").tempdir().unwrap();
        let tag = root.path().join(format!("{REPOSITORY}/releases/download/v{VERSION}"));
        std::fs::create_dir_all(&tag).unwrap();
        for (name, content) in files {
            std::fs::write(tag.join(name), content).unwrap();
        }
        if !files.is_empty() {
            let sums = Command::new("sh").arg("-c").arg("sha256sum -- *").current_dir(&tag).output().unwrap();
            assert!(sums.status.success());
            std::fs::write(tag.join("SHA256SUMS"), sums.stdout).unwrap();
        }
        let requests = root.path().join("requests.log");
        let mut server = Command::new(action_tools().join("python"))
            .args(["-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory"])
            .arg(root.path())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&requests).unwrap())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(server.stdout.take().unwrap()).read_line(&mut first).unwrap();
        let port = first
            .split_whitespace()
            .skip_while(|word| *word != "port")
            .nth(1)
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("the server's first line names its port: {first}"));
        ReleaseServer { root, server, port, requests }
    }

    /// The release's directory, to alter a file after its checksums were written.
    fn tag_dir(&self) -> PathBuf {
        self.root.path().join(format!("{REPOSITORY}/releases/download/v{VERSION}"))
    }

    /// The files of the release that were asked for, in order.
    fn requested(&self) -> Vec<String> {
        std::fs::read_to_string(&self.requests)
            .unwrap()
            .lines()
            .filter_map(|line| line.split("\"GET ").nth(1)?.split(' ').next())
            .map(|path| path.rsplit('/').next().unwrap().to_string())
            .collect()
    }

    /// The install step, run as at `ref` (GITHUB_ACTION_REF) on a Linux X64 runner whose PATH
    /// has no cargo: what it cannot download, it cannot build either, and says so.
    fn install_at(&self, action_ref: &str, runner_os: &str) -> ActionRun {
        let workspace = tempfile::Builder::new().prefix("workspace-").tempdir().unwrap();
        let server = format!("http://127.0.0.1:{}", self.port);
        run_action_with_env(
            workspace.path(),
            "",
            serde_json::json!({"command": "install"}),
            &[
                ("GITHUB_SERVER_URL", &server),
                ("GITHUB_ACTION_REPOSITORY", REPOSITORY),
                ("GITHUB_ACTION_REF", action_ref),
                ("RUNNER_OS", runner_os),
                ("RUNNER_ARCH", "X64"),
                ("PATH", "/usr/local/bin:/usr/bin:/bin"),
            ],
        )
    }
}

impl Drop for ReleaseServer {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

/// A gzipped tar archive of `members` (name, content, and a symlink target instead of content
/// where one is given), written by Python's `tarfile`, which writes any member name asked for.
fn archive(members: &[(&str, &[u8], Option<&str>)]) -> Vec<u8> {
    let dir = tempfile::Builder::new().prefix("archive-").tempdir().unwrap();
    let mut listed = Vec::new();
    for (number, (name, content, link)) in members.iter().enumerate() {
        let source = dir.path().join(format!("member-{number}"));
        std::fs::write(&source, content).unwrap();
        listed.push(serde_json::json!([name, source, link]));
    }
    let out = dir.path().join("out.tar.gz");
    let script = r#"
import json, sys, tarfile
members, out = json.loads(sys.argv[1]), sys.argv[2]
with tarfile.open(out, "w:gz") as archive:
    for name, source, link in members:
        if link:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, link
            archive.addfile(info)
        else:
            info = archive.gettarinfo(source, arcname=name)
            info.mode = 0o755
            with open(source, "rb") as file:
                archive.addfile(info, file)
"#;
    let made = Command::new(action_tools().join("python"))
        .args(["-c", script, &serde_json::Value::Array(listed).to_string()])
        .arg(&out)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    std::fs::read(out).unwrap()
}

fn binary() -> Vec<u8> {
    std::fs::read(assert_cmd::cargo::cargo_bin!("mutdelta")).unwrap()
}

/// A release as the release workflow makes it: the executable's archive and the COMMIT file.
fn release_of(executable: &[u8]) -> ReleaseServer {
    ReleaseServer::serve(&[
        (&archive_name(), archive(&[("mutdelta", executable, None)])),
        ("COMMIT", format!("{RELEASED_COMMIT}\n").into_bytes()),
    ])
}

fn installed(run: &ActionRun) -> PathBuf {
    PathBuf::from(run.outputs["path"].as_str().unwrap())
}

#[test]
fn at_its_release_tag_or_commit_the_action_installs_the_released_executable_checked_against_its_checksums() {
    let release = release_of(&binary());

    for action_ref in [format!("v{VERSION}"), RELEASED_COMMIT.to_string()] {
        let run = release.install_at(&action_ref, "Linux");

        assert_eq!(run.status, 0, "{action_ref}: {}", run.log);
        assert!(
            run.log.contains(&format!(
                "the released executable of v{VERSION} for x86_64-unknown-linux-musl, checked against the release's SHA256SUMS"
            )),
            "{}",
            run.log
        );
        let path = installed(&run);
        assert!(path.starts_with(run.runner_temp.path()), "{}", path.display());
        assert_eq!(std::fs::read(&path).unwrap(), binary(), "the installed file is the released executable");
        let said = Command::new(&path).arg("--version").output().unwrap();
        assert_eq!(String::from_utf8_lossy(&said.stdout).trim(), format!("mutdelta {VERSION}"));
    }
    let archive = archive_name();
    assert_eq!(
        release.requested(),
        ["SHA256SUMS", archive.as_str(), "SHA256SUMS", "COMMIT", archive.as_str()],
        "a tag needs the checksums and the archive; a commit also the COMMIT file to compare with"
    );
}

#[test]
fn a_download_that_does_not_match_its_checksum_or_holds_no_plain_executable_is_never_run() {
    let tampered = release_of(&binary());
    let archive_path = tampered.tag_dir().join(archive_name());
    let mut altered = archive(&[("mutdelta", b"#!/bin/sh\ntouch \"$0.ran\"\necho mutdelta 0\n", None)]);
    altered.extend_from_slice(b"\0");
    std::fs::write(&archive_path, altered).unwrap();
    let run = tampered.install_at(&format!("v{VERSION}"), "Linux");
    let name = archive_name();
    assert_refused(&run, &format!("the downloaded {name} does not match the release's SHA256SUMS"));
    assert_eq!(unpacked(&run), Vec::<String>::new(), "a download that fails its checksum is not unpacked");

    // An archive the checksums vouch for, whose mutdelta is a link and whose other members try
    // to write beside and above the directory it is unpacked into.
    let escape = tempfile::Builder::new().prefix("escape-").tempdir().unwrap();
    let outside = escape.path().join("written");
    let hostile = ReleaseServer::serve(&[(
        &archive_name(),
        archive(&[
            ("../escaped", b"x", None),
            (outside.to_str().unwrap(), b"x", None),
            ("mutdelta", b"", Some("/bin/sh")),
        ]),
    )]);
    let run = hostile.install_at(&format!("v{VERSION}"), "Linux");
    assert_refused(&run, &format!("the release archive {name} holds no plain file named mutdelta"));
    assert!(!outside.exists(), "an absolute member is not written");
    let release_dir = run.runner_temp.path().join("mutdelta-release");
    assert!(!release_dir.join("escaped").exists(), "a member above the unpacking directory is not written");
    assert_eq!(unpacked(&run), ["mutdelta"], "only the member named mutdelta was unpacked, and refused");

    // The right checksum, but an executable of another version.
    let other = release_of(b"#!/bin/sh\necho mutdelta 9.9.9\n");
    let run = other.install_at(&format!("v{VERSION}"), "Linux");
    assert_refused(
        &run,
        &format!("the released executable of v{VERSION} says mutdelta 9.9.9, not mutdelta {VERSION}"),
    );
}

/// The install step failed with `said` as its error annotation, and installed nothing.
fn assert_refused(run: &ActionRun, said: &str) {
    assert_eq!(run.status, 2, "{}", run.log);
    assert!(run.log.contains(&format!("::error title=mutdelta action::{said}")), "{}", run.log);
    assert_eq!(run.outputs["path"], "", "nothing is installed");
}

/// The names the install step unpacked from the release's archive.
fn unpacked(run: &ActionRun) -> Vec<String> {
    let dir = run.runner_temp.path().join("mutdelta-release/unpacked");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries.map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned()).collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn off_its_release_or_without_one_the_action_builds_from_its_source() {
    let release = release_of(&binary());
    let no_cargo = "::error title=mutdelta action::cargo is not on PATH to build mutdelta";
    let cases = [
        ("main", "Linux", format!("the action runs at main, not at its release tag v{VERSION}")),
        (
            "0123456789abcdef0123456789abcdef01234567",
            "Linux",
            format!(
                "the action runs at commit 0123456789abcdef0123456789abcdef01234567, not at release v{VERSION}'s commit"
            ),
        ),
        (
            &format!("v{VERSION}"),
            "macOS",
            "releases hold executables for Linux on X64 and ARM64, not macOS/X64".to_string(),
        ),
    ];
    for (action_ref, runner_os, reason) in &cases {
        let run = release.install_at(action_ref, runner_os);
        assert_eq!(run.status, 2, "{}", run.log);
        assert!(run.log.contains(reason.as_str()), "{action_ref}: {}", run.log);
        assert!(run.log.contains(no_cargo), "{action_ref}: {}", run.log);
    }
    assert_eq!(
        release.requested(),
        ["SHA256SUMS", "COMMIT"],
        "only the commit's comparison asked the release for anything; the archive never"
    );

    let none = ReleaseServer::serve(&[]);
    let run = none.install_at(&format!("v{VERSION}"), "Linux");
    assert_eq!(run.status, 2, "{}", run.log);
    assert!(
        run.log.contains(&format!("there is no release v{VERSION} of {REPOSITORY}"))
            && run.log.contains(no_cargo),
        "{}",
        run.log
    );

    // A release without an executable for this runner (its checksums list only COMMIT).
    let partial = ReleaseServer::serve(&[("COMMIT", format!("{RELEASED_COMMIT}\n").into_bytes())]);
    let run = partial.install_at(&format!("v{VERSION}"), "Linux");
    assert_eq!(run.status, 2, "{}", run.log);
    assert!(
        run.log.contains(&format!("/releases/download/v{VERSION} has no {}: building", archive_name()))
            && run.log.contains(no_cargo),
        "{}",
        run.log
    );
}

/// The release workflow writes what the install step reads: the COMMIT file and the archives'
/// names, under the checksums.
#[test]
fn the_release_workflow_publishes_what_the_install_step_downloads() {
    let workflow =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".github/workflows/release.yml"))
            .unwrap();
    let script =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/action")).unwrap();
    assert!(workflow.contains("echo \"$GITHUB_SHA\" > dist/COMMIT"), "the release holds its commit");
    assert!(workflow.contains("\"dist/mutdelta-$version-$target.tar.gz\""));
    assert!(script.contains("\"$dir/mutdelta-$version-$target.tar.gz\""));
    let sums = workflow.find("sha256sum -- *").unwrap();
    assert!(workflow.find("dist/COMMIT").unwrap() < sums, "COMMIT is written before the checksums");
}
