//! The command line as a user meets it: grouped and wrapped help with examples, completions a real bash completes with, the manual page `man` renders, colour, reports on standard output, the compact view, and options refused where they do nothing.

use std::path::Path;
use std::process::Command;

use crate::common::{check, fixture_repo, mutdelta, python};

fn help(columns: &str) -> String {
    let output = Command::new(assert_cmd::cargo::cargo_bin!("mutdelta"))
        .args(["check", "--help"])
        .env("COLUMNS", columns)
        .output()
        .unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn check_help_groups_its_options_under_headings_wraps_to_the_terminal_and_ends_on_examples() {
    let text = help("80");
    let headings: Vec<&str> =
        text.lines().filter(|line| line.ends_with(':') && !line.starts_with(' ')).collect();
    assert_eq!(
        headings,
        [
            "Options:",
            "What to check:",
            "Which tests:",
            "Speed:",
            "Mutants:",
            "Reports:",
            "Configuration:",
            "Examples:"
        ],
        "{text}"
    );
    let long: Vec<&str> = text.lines().filter(|line| line.chars().count() > 80).collect();
    assert_eq!(long, Vec::<&str>::new(), "every line fits 80 columns");
    // Words are wrapped whole, never broken mid-word.
    let words: Vec<&str> = text.split_whitespace().collect();
    for word in ["repository's", "schemata)", "interpreter"] {
        assert!(words.contains(&word), "{word} unbroken in:\n{text}");
    }
    for word in ["--python", "$VIRTUAL_ENV's,", "--exclude", "--disable-mutator", "--color", "--diff"] {
        assert!(text.split_whitespace().any(|w| w == word || w.starts_with(word)), "{word} in:\n{text}");
    }
    let wide = help("140");
    assert!(wide.lines().any(|line| line.chars().count() > 100), "wider terminals get longer lines");
    assert!(text.contains("  mutdelta check --commit HEAD "), "{text}");
    assert!(text.contains("Exit status: 0"), "{text}");
}

#[test]
fn bash_completes_the_commands_and_options_from_the_generated_script() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("mutdelta.bash");
    let generated = mutdelta(dir.path(), &["completions", "bash"]);
    assert_eq!(generated.code, 0, "{generated:?}");
    std::fs::write(&script, &generated.stdout).unwrap();
    let complete = |words: &str| -> Vec<String> {
        let program = format!(
            "source {}; COMP_WORDS=({words}); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 )); \
             COMP_LINE=\"{words}\"; COMP_POINT=${{#COMP_LINE}}; _mutdelta mutdelta \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        );
        let output = Command::new("bash").args(["--norc", "-c", &program]).output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap().lines().map(str::to_string).collect()
    };
    let commands = complete("mutdelta ''");
    for command in ["check", "list", "merge", "show", "install-hook", "completions"] {
        assert!(commands.iter().any(|c| c == command), "{command} in {commands:?}");
    }
    assert!(!commands.iter().any(|c| c == "__watchdog"), "the internal command is not offered: {commands:?}");
    let options = complete("mutdelta check --com");
    assert_eq!(options, ["--commit"], "{options:?}");
}

#[test]
fn the_manual_page_renders_with_man_and_names_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("mutdelta.1");
    let generated = mutdelta(dir.path(), &["man"]);
    assert_eq!(generated.code, 0, "{generated:?}");
    std::fs::write(&page, &generated.stdout).unwrap();
    let output =
        Command::new("man").arg("-l").arg(&page).env("MANPAGER", "cat").env("MANWIDTH", "80").output();
    let output = output.expect("man (man-db) renders the page");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(shown.contains("Mutation-test the lines a change adds"), "{shown}");
    for command in ["mutdelta-check", "mutdelta-merge", "mutdelta-install-hook"] {
        assert!(shown.contains(command), "{command} has its page:\n{shown}");
    }
    assert!(shown.contains("--commit"), "{shown}");
    let synopsis = |page: &str| {
        // The page's title line: `mutdelta-check(1)   General Commands Manual ...`.
        let from = shown.find(&format!("{page}(1) ")).expect("the page");
        let at = from + shown[from..].find("SYNOPSIS\n").expect("a synopsis") + "SYNOPSIS\n".len();
        let lines = shown[at..].lines().take_while(|line| !line.trim().is_empty());
        lines.flat_map(str::split_whitespace).collect::<Vec<_>>().join(" ")
    };
    let main = synopsis("mutdelta");
    assert!(main.starts_with("mutdelta [-C DIR] [-h|--help] [-V|--version] <command>"), "{main}");
    let check = synopsis("mutdelta-check");
    for option in
        ["mutdelta-check [--staged] [--commit REV]", "[--python PATH]", "[-j|--jobs N]", "[-q|--quiet]"]
    {
        assert!(check.contains(option), "{option} in {check}");
    }
}

#[test]
fn a_json_report_named_dash_goes_to_standard_output_and_the_terminal_report_to_standard_error() {
    let repo = fixture_repo("model_client");
    let run = check(repo.path(), &["--commit", "HEAD", "--json", "-"]);
    assert_eq!(run.code, 1, "{run:?}");
    let document: serde_json::Value =
        serde_json::from_str(&run.stdout).expect("stdout is the JSON document alone");
    assert_eq!(document["schemaVersion"], "2", "{document}");
    assert!(run.stderr.contains("[MUT-survived] model_client.py:15:9: delete statement"), "{run:?}");
    assert!(run.stderr.contains("mutation delta: 2 of 6 mutants caught"), "{run:?}");
    assert!(!repo.path().join("-").exists(), "no file named -");

    let two = check(repo.path(), &["--commit", "HEAD", "--json", "-", "--sarif", "-"]);
    assert_eq!(two.code, 2, "{two:?}");
    assert!(two.stderr.contains("--json and --sarif all name standard output (-)"), "{two:?}");
}

#[test]
fn diff_none_prints_each_survivor_on_one_line_with_the_same_verdicts() {
    let repo = fixture_repo("model_client");
    let full = check(repo.path(), &["--commit", "HEAD"]);
    let compact = check(repo.path(), &["--commit", "HEAD", "--diff", "none"]);
    assert_eq!((full.code, compact.code), (1, 1));
    let headers = |text: &str| -> Vec<String> {
        text.lines().filter(|line| line.starts_with("[MUT-")).map(str::to_string).collect()
    };
    assert_eq!(headers(&compact.stdout), headers(&full.stdout), "{compact:?}");
    assert!(full.stdout.contains("+++ b/model_client.py"), "{full:?}");
    assert!(!compact.stdout.contains("+++ b/model_client.py"), "{compact:?}");
    assert!(!compact.stdout.contains("ran under:"), "{compact:?}");
}

/// What `check --commit HEAD ARGS` of model_client writes to a pseudo-terminal (`script`), with
/// `NO_COLOR` set to `no_color` if given.
fn on_a_terminal(repo: &Path, args: &str, no_color: Option<&str>) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let typescript = tmp.path().join("typescript");
    let inner = format!(
        "{} check --commit HEAD -j 2 --python {} {args}",
        assert_cmd::cargo::cargo_bin!("mutdelta").display(),
        python().display()
    );
    let mut command = Command::new("script");
    command.args(["-qfec", &inner]).arg(&typescript).current_dir(repo);
    command.env("TERM", "xterm").env_remove("NO_COLOR").env_remove("CI");
    if let Some(value) = no_color {
        command.env("NO_COLOR", value);
    }
    let status = command.stdout(std::process::Stdio::null()).status().expect("`script` (util-linux) runs");
    assert_eq!(status.code(), Some(1), "survivors: exit 1");
    String::from_utf8_lossy(&std::fs::read(&typescript).unwrap()).into_owned()
}

#[test]
fn colour_is_on_for_a_terminal_off_with_no_color_or_never_and_forced_with_always() {
    let repo = fixture_repo("model_client");
    let red_tag = "\u{1b}[1;31m[MUT-survived]\u{1b}[0m model_client.py:15:9";
    let coloured = on_a_terminal(repo.path(), "", None);
    assert!(coloured.contains(red_tag), "a terminal gets colour:\n{coloured}");
    assert!(coloured.contains("\u{1b}[32m    +        pass\u{1b}[0m"), "{coloured}");
    let no_color = on_a_terminal(repo.path(), "", Some("1"));
    assert!(no_color.contains("[MUT-survived] model_client.py:15:9"), "{no_color}");
    assert!(!no_color.contains(red_tag), "NO_COLOR is honoured:\n{no_color}");
    let never = on_a_terminal(repo.path(), "--color never", None);
    assert!(!never.contains("\u{1b}[31m") && !never.contains(red_tag), "{never}");

    let piped = check(repo.path(), &["--commit", "HEAD"]);
    assert!(!piped.stdout.contains('\u{1b}'), "a pipe gets none: {piped:?}");
    let always = check(repo.path(), &["--commit", "HEAD", "--color", "always"]);
    assert!(always.stdout.contains(red_tag), "{always:?}");
}

#[test]
fn cli_exclude_and_disable_mutator_come_beside_the_configuration() {
    let repo = fixture_repo("model_client");
    let listed = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["list", "--commit", "HEAD", "--json"];
        args.extend_from_slice(extra);
        let run = mutdelta(repo.path(), &args);
        assert_eq!(run.code, 0, "{run:?}");
        let listed: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        listed["mutants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["mutatorName"].as_str().unwrap().to_string())
            .collect()
    };
    let all = listed(&[]);
    assert!(all.iter().any(|name| name == "StringLiteral"), "{all:?}");
    let fewer = listed(&["--disable-mutator", "StringLiteral"]);
    assert!(!fewer.is_empty() && !fewer.iter().any(|name| name == "StringLiteral"), "{fewer:?}");
    assert_eq!(listed(&["--exclude", "model_*.py"]), Vec::<String>::new());

    let unknown = mutdelta(repo.path(), &["list", "--commit", "HEAD", "--disable-mutator", "StringLiteal"]);
    assert_eq!(unknown.code, 2, "{unknown:?}");
    assert!(
        unknown.stderr.contains("\"StringLiteal\" is no mutator family (did you mean `StringLiteral`?)"),
        "{unknown:?}"
    );
    let not_a_glob = mutdelta(repo.path(), &["list", "--commit", "HEAD", "--exclude", "docs/[x"]);
    assert_eq!(not_a_glob.code, 2, "{not_a_glob:?}");
    assert!(not_a_glob.stderr.contains("--exclude \"docs/[x\" is not a glob"), "{not_a_glob:?}");
}

#[test]
fn a_directory_given_to_a_command_that_reads_no_repository_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = mutdelta(dir.path(), &["-C", dir.path().to_str().unwrap(), "mutators"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(
        run.stderr.trim(),
        "error: -C names a repository, and `mutdelta mutators` reads none: leave -C out"
    );
}
