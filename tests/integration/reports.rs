//! The reports people open, each from a real check of a fixture: the HTML page as headless Chromium draws it, JUnit and SARIF against their schemas, GitHub annotations.

use serde_json::json;

use crate::common::{
    browse, browse_with, check, fixture_repo, fixture_repo_variant, git, markdown_to_html, mutants_on_line,
    mutdelta, mutdelta_as, python, read_valid_junit, read_valid_report, read_valid_sarif, report_viewer,
    sarif_multitool_findings,
};

const CUT_OFF_TEST: &str = "tests/test_model_client.py::ParseReplyTest::test_cut_off_reply";

#[test]
fn html_report_shows_the_score_and_each_survivor_at_its_added_line_in_a_browser() {
    let repo = fixture_repo("model_client");
    // Markup in the source is shown as text, never read as markup.
    let file = repo.path().join("model_client.py");
    let source = std::fs::read_to_string(&file)
        .unwrap()
        .replace("[MAX_TOKENS] reply", "<b>[MAX_TOKENS]</b></script> reply");
    std::fs::write(&file, source).unwrap();
    git(repo.path(), &["commit", "-q", "-a", "--amend", "--no-edit"]);
    let out = tempfile::tempdir().unwrap();
    let html = out.path().join("report.html");

    let run = check(repo.path(), &["--commit", "HEAD", "--html", html.to_str().unwrap()]);

    assert_eq!(run.code, 1, "{run:?}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("content=\"default-src 'none';"), "a policy that forbids every load: {page}");
    assert!(!page.contains("data-line="), "the rows are drawn by the page's script, not written as markup");
    let (dom, requests) = browse(&html);
    assert!(dom.contains("<p class=\"score low\" id=\"score\">33.3%</p>"), "2 of 6 caught: {dom}");
    assert!(dom.contains("2 of 6 mutants caught · 2 new lines · 2 lines with survivors"), "{dom}");
    assert!(dom.contains("<tr id=\"count-Survived\"><td><span class=\"badge status-Survived\">Survived</span></td><td>4</td>"), "{dom}");
    assert!(
        dom.contains("<tr class=\"line\" data-line=\"13\""),
        "an unchanged line is not highlighted: {dom}"
    );
    for line in [14, 15] {
        assert!(
            dom.contains(&format!("<tr class=\"line added survived\" data-line=\"{line}\"")),
            "added line {line} highlighted, with survivors: {dom}"
        );
    }
    let survivor =
        dom.split("<tr class=\"mutants\" data-mutants-of=\"15\">").nth(1).expect("line 15's mutants");
    assert!(survivor.contains("mutant 5, column 9: <strong>delete statement</strong>"), "{survivor}");
    assert!(
        survivor.contains("<div class=\"hint\">hint: no test expects the error `raise RuntimeError(\"&lt;b&gt;[MAX_TOKENS]&lt;/...` raises: add one that asserts it is raised</div>"),
        "the hint under the survivor, as text: {survivor}"
    );
    assert!(
        survivor.contains("<span class=\"del\">-        raise RuntimeError(\"&lt;b&gt;[MAX_TOKENS]&lt;/b&gt;&lt;/script&gt; reply was cut off at the output-token limit\")</span>")
            && survivor.contains("<span class=\"ins\">+        pass</span>"),
        "the survivor's diff: {survivor}"
    );
    assert!(
        survivor.contains(&format!("ran under: <a href=\"#T0\"><code>{CUT_OFF_TEST}</code></a>")),
        "{survivor}"
    );
    assert!(!dom.contains("<b>"), "no markup from the source: {dom}");
    let shown =
        dom.split("<main id=\"report\">").nth(1).and_then(|rest| rest.split("</main>").next()).unwrap();
    assert!(
        !shown.contains("null") && !shown.contains("undefined"),
        "no part missing from the data is shown: {shown}"
    );
    assert!(
        dom.contains("<a href=\"#L0-14\">model_client.py:14</a> — 2 survivors"),
        "worst lines listed first: {dom}"
    );
    assert_eq!(requests, Vec::<String>::new(), "the page loads nothing");
}

#[test]
fn html_report_shows_only_the_statuses_asked_for_folds_caught_mutants_and_links_each_survivors_tests() {
    let repo = fixture_repo("model_client");
    let out = tempfile::tempdir().unwrap();
    let html = out.path().join("report.html");

    let run = check(repo.path(), &["--commit", "HEAD", "--html", html.to_str().unwrap()]);

    assert_eq!(run.code, 1, "{run:?}");
    let url = format!("file://{}", html.display());
    let (dom, _) = browse_with(&url, &[]);
    let caught = "<details class=\"caught\"><summary>2 mutants caught</summary>";
    assert!(dom.contains(caught), "line 14's two kills folded under one line: {dom}");
    assert!(
        dom.contains(
            "<input type=\"checkbox\" data-show=\"Killed\" aria-label=\"show Killed\" checked=\"\">"
        ),
        "every status shown: {dom}"
    );
    // Each survivor's tests link to their entries, which say what each test killed and which
    // survivors it ran.
    let survivor =
        dom.split("<div class=\"mutant\" id=\"mutant-5\" data-status=\"Survived\">").nth(1).unwrap();
    let survivor = survivor.split("</div></div>").next().unwrap();
    assert!(
        survivor.ends_with(&format!("ran under: <a href=\"#T0\"><code>{CUT_OFF_TEST}</code></a>")),
        "{survivor}"
    );
    let entry = |index: usize| {
        let at = format!("<li id=\"T{index}\" class=\"test\">");
        dom.split(&at)
            .nth(1)
            .and_then(|rest| rest.split("</li>").next())
            .unwrap_or_else(|| panic!("{at}: {dom}"))
    };
    assert!(
        entry(0).starts_with(&format!("<div><code>{CUT_OFF_TEST}</code> — ran 6 mutants, killed none</div>")),
        "{}",
        entry(0)
    );
    assert!(
        entry(0).contains("ran, and it survived: <a href=\"#L0-14\">mutant 1 (model_client.py:14)</a> force condition to False, "),
        "{}",
        entry(0)
    );
    assert!(
        entry(1).contains(
            "— ran 4 mutants, killed 2 mutants</div><div class=\"tests\">killed: \
             <a href=\"#L0-14\">mutant 2 (model_client.py:14)</a> force condition to True, \
             <a href=\"#L0-14\">mutant 3 (model_client.py:14)</a> replace == with !=</div>"
        ),
        "{}",
        entry(1)
    );
    assert!(dom.contains("<details class=\"tests\" id=\"tests\"><summary>"), "the tests start folded: {dom}");
    let (linked, _) = browse_with(&format!("{url}#T0"), &[]);
    assert!(
        linked.contains("<details class=\"tests\" id=\"tests\" open=\"\">"),
        "a link to a test unfolds them: {linked}"
    );

    let (survivors, _) = browse_with(&format!("{url}?status=Survived"), &[]);
    assert!(
        survivors.contains("<input type=\"checkbox\" data-show=\"Killed\" aria-label=\"show Killed\">"),
        "{survivors}"
    );
    assert!(survivors.contains("<details class=\"caught\" hidden=\"\">"), "kills hidden: {survivors}");
    assert!(
        survivors.contains("<div class=\"mutant\" id=\"mutant-5\" data-status=\"Survived\">"),
        "{survivors}"
    );
    let (kills, _) = browse_with(&format!("{url}?status=Killed"), &[]);
    assert!(
        kills.contains("<div class=\"mutant\" id=\"mutant-5\" data-status=\"Survived\" hidden=\"\">"),
        "{kills}"
    );
    assert!(
        kills.contains("<tr class=\"mutants\" data-mutants-of=\"15\" hidden=\"\">"),
        "line 15 had only survivors: {kills}"
    );
    assert!(kills.contains(caught), "{kills}");
}

#[test]
fn unticking_a_status_in_the_html_report_hides_its_mutants_and_a_survivors_test_link_leads_to_the_test() {
    let repo = fixture_repo("model_client");
    let out = tempfile::tempdir().unwrap();
    let html = out.path().join("report.html");
    let run = check(repo.path(), &["--commit", "HEAD", "--html", html.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:?}");
    let holder = out.path().join("holder.html");
    std::fs::write(
        &holder,
        format!(
            "<!DOCTYPE html><html><body><iframe id=\"report\" data-src=\"file://{}\" data-follow=\"mutant-5\"></iframe>\
             <pre id=\"seen\"></pre><script>{}</script></body></html>\n",
            html.display(),
            include_str!("html_driver.js")
        ),
    )
    .unwrap();

    let (dom, _) = browse_with(
        &format!("file://{}", holder.display()),
        &["--allow-file-access-from-files", "--virtual-time-budget=10000"],
    );

    let seen = dom.split("<pre id=\"seen\">").nth(1).and_then(|rest| rest.split("</pre>").next()).unwrap();
    assert_eq!(
        seen.lines().collect::<Vec<_>>(),
        [
            "caught mutants after unticking Killed: hidden",
            "address: ?status=Survived,NoCoverage,Timeout,CompileError,RuntimeError,Ignored",
            &format!("following: {CUT_OFF_TEST}"),
            "tests: unfolded",
            &format!("at: {CUT_OFF_TEST} — ran 6 mutants, killed none"),
        ],
        "{dom}"
    );
}

#[test]
fn html_report_folds_a_file_whose_mutants_were_all_caught_until_a_link_points_into_it() {
    let repo = fixture_repo("strong_tests");
    let out = tempfile::tempdir().unwrap();
    let html = out.path().join("report.html");

    let run = check(repo.path(), &["--commit", "HEAD", "--html", html.to_str().unwrap()]);

    assert_eq!(run.code, 0, "{run:?}");
    let url = format!("file://{}", html.display());
    let (dom, _) = browse_with(&url, &[]);
    assert!(dom.contains("<details class=\"file\" data-path=\"grades.py\"><summary><h2>grades.py</h2> <span class=\"muted\">10 mutants · 10 caught"), "{dom}");
    let (linked, _) = browse_with(&format!("{url}#L0-5"), &[]);
    assert!(linked.contains("<details class=\"file\" data-path=\"grades.py\" open=\"\">"), "{linked}");
}

#[test]
fn stryker_viewer_lists_each_test_in_its_tests_view_with_the_mutants_it_killed() {
    let repo = fixture_repo("model_client");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("report.json");

    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 1, "{run:?}");
    let report = read_valid_report(&json);
    let page = out.path().join("viewer.html");
    let data = serde_json::to_string(&report).unwrap().replace('<', "\\u003c");
    // The viewer shortens paths by their common folder: the one test file is shown by its name.
    std::fs::write(
        &page,
        format!(
            "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><script src=\"file://{}\"></script></head>\n\
             <body><mutation-test-report-app></mutation-test-report-app><pre id=\"seen\"></pre>\n\
             <script type=\"application/json\" id=\"report\" data-test-file=\"test_model_client.py\">{data}</script>\n\
             <script>{}</script></body></html>\n",
            report_viewer().display(),
            include_str!("viewer_driver.js"),
        ),
    )
    .unwrap();

    let (dom, _) = browse_with(&format!("file://{}", page.display()), &["--virtual-time-budget=60000"]);

    let seen = dom.split("<pre id=\"seen\">").nth(1).and_then(|rest| rest.split("</pre>").next()).unwrap();
    let seen: Vec<&str> = seen.lines().collect();
    let covered = |at: &str| format!("  ☂️ {at}");
    assert_eq!(
        seen,
        [
            "tabs: 👽 Mutants, 🧪 Tests",
            "test: ☂ ParseReplyTest::test_cut_off_reply [Covering]",
            &covered("if False: (model_client.py:14:8)"),
            &covered("if True: (model_client.py:14:8)"),
            &covered("if stop_reason != \"max_tokens\": (model_client.py:14:20)"),
            &covered("if stop_reason == \"\": (model_client.py:14:23)"),
            &covered("pass (model_client.py:15:9)"),
            &covered("raise RuntimeError(\"\") (model_client.py:15:28)"),
            "test: ✅ ParseReplyTest::test_text_is_kept [Killing]",
            "  🎯 if True: (model_client.py:14:8)",
            "  🎯 if stop_reason != \"max_tokens\": (model_client.py:14:20)",
            &covered("if False: (model_client.py:14:8)"),
            &covered("if stop_reason == \"\": (model_client.py:14:23)"),
        ],
        "{dom}"
    );
}

#[test]
fn the_browser_check_sees_a_page_that_loads_something() {
    // The proxy in `browse` is what the HTML test relies on to say the report loads nothing.
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("loads.html");
    std::fs::write(&page, "<!DOCTYPE html><img src=\"http://report-probe.invalid/x.png\"><p>x</p>").unwrap();

    let (_, requests) = browse(&page);

    assert!(
        requests.iter().any(|line| line.contains("report-probe.invalid")),
        "the image request was recorded: {requests:?}"
    );
}

#[test]
fn junit_report_fails_a_test_case_per_survivor_and_follows_the_junit_schema() {
    let repo = fixture_repo("model_client");
    let out = tempfile::tempdir().unwrap();
    let junit = out.path().join("junit.xml");

    let run = check(repo.path(), &["--commit", "HEAD", "--junit", junit.to_str().unwrap()]);

    assert_eq!(run.code, 1, "{run:?}");
    let xml = read_valid_junit(&junit);
    assert!(xml.contains("<testsuites name=\"mutdelta\" tests=\"6\" failures=\"4\" errors=\"0\""), "{xml}");
    assert_eq!(xml.matches("<testcase classname=\"model_client.py\" name=\"mutant ").count(), 6, "{xml}");
    assert_eq!(xml.matches("<failure type=\"Survived\"").count(), 4, "{xml}");
    let deleted = xml
        .split("name=\"mutant 5 at 15:9: delete statement\"")
        .nth(1)
        .and_then(|rest| rest.split("</testcase>").next())
        .expect("the deleted raise's test case");
    assert!(
        deleted.contains("message=\"Survived: no test failed with this mutant; hint: no test expects the error `raise RuntimeError(&quot;[MAX_TOKENS] repl...` raises: add one that asserts it is raised\""),
        "the verdict with its hint: {deleted}"
    );
    assert!(deleted.contains("+        pass\n"), "the diff in the failure: {deleted}");
    assert!(deleted.contains(&format!("ran under: {CUT_OFF_TEST}")), "{deleted}");
    let killed = xml.split("name=\"mutant 2 at 14:8: force condition to True\"").nth(1).unwrap();
    assert!(killed.split('\n').next().unwrap().ends_with("/>"), "a killed mutant passes: {killed}");
}

#[test]
fn sarif_report_has_a_result_per_surviving_line_and_follows_the_sarif_schema() {
    let repo = fixture_repo("model_client");
    let out = tempfile::tempdir().unwrap();
    let (sarif, json) = (out.path().join("r.sarif"), out.path().join("r.json"));

    let run = check(
        repo.path(),
        &["--commit", "HEAD", "--sarif", sarif.to_str().unwrap(), "--json", json.to_str().unwrap()],
    );

    assert_eq!(run.code, 1, "{run:?}");
    let log = read_valid_sarif(&sarif);
    assert_eq!(log["version"], "2.1.0");
    let run_log = &log["runs"][0];
    assert_eq!(run_log["invocations"], json!([{ "executionSuccessful": true }]));
    let rules: Vec<&str> = run_log["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["MUT-survived", "MUT-nocoverage", "MUT-lost"]);
    let results = run_log["results"].as_array().unwrap();
    let places: Vec<_> = results
        .iter()
        .map(|r| {
            let location = &r["locations"][0]["physicalLocation"];
            (r["ruleId"].clone(), location["artifactLocation"].clone(), location["region"].clone())
        })
        .collect();
    let at = |line: u64, column: u64| {
        (
            json!("MUT-survived"),
            json!({ "uri": "model_client.py", "uriBaseId": "%SRCROOT%" }),
            json!({ "startLine": line, "startColumn": column }),
        )
    };
    assert_eq!(places, [at(14, 8), at(15, 9)]);
    let message = results[1]["message"]["text"].as_str().unwrap();
    assert!(message.starts_with("2 mutants survived, no test failed with the line changed: delete statement (mutant 5, column 9; hint: no test expects the error `raise RuntimeError(\"[MAX_TOKENS] repl...` raises: add one that asserts it is raised);"), "{message}");
    assert!(
        run_log["tool"]["driver"]["informationUri"].as_str().is_some_and(|uri| uri.starts_with("https://")),
        "{run_log}"
    );
    let fingerprints: Vec<&str> =
        results.iter().map(|r| r["partialFingerprints"]["mutdelta/v1"].as_str().unwrap()).collect();
    assert!(
        fingerprints.iter().all(|f| f.len() == 16) && fingerprints[0] != fingerprints[1],
        "{fingerprints:?}"
    );
    assert_eq!(
        sarif_multitool_findings(&sarif),
        Vec::<String>::new(),
        "the multitool's validate warns of nothing"
    );
    let report = read_valid_report(&json);
    assert_eq!(
        report["mutdelta"]["addedLines"],
        json!({ "model_client.py": [14, 15] }),
        "the added lines travel in the JSON report"
    );
}

#[test]
fn sarif_fingerprints_stay_when_lines_are_added_above_the_survivors() {
    let repo = fixture_repo("model_client");
    let out = tempfile::tempdir().unwrap();
    let (before, after) = (out.path().join("before.sarif"), out.path().join("after.sarif"));
    let fingerprints = |sarif: &std::path::Path| -> Vec<(u64, String)> {
        let log = read_valid_sarif(sarif);
        log["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let line = r["locations"][0]["physicalLocation"]["region"]["startLine"].as_u64().unwrap();
                (line, r["partialFingerprints"]["mutdelta/v1"].as_str().unwrap().to_string())
            })
            .collect()
    };
    let run = check(repo.path(), &["--commit", "HEAD", "-q", "--sarif", before.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:?}");
    // A later commit puts two lines above the change; the change is checked again from its base.
    let file = repo.path().join("model_client.py");
    let source = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("# a header\n# added later\n{source}")).unwrap();
    git(repo.path(), &["commit", "-q", "-a", "-m", "a header"]);

    let run = check(repo.path(), &["--base", "HEAD~2", "-q", "--sarif", after.to_str().unwrap()]);

    assert_eq!(run.code, 1, "{run:?}");
    let (before, after) = (fingerprints(&before), fingerprints(&after));
    assert_eq!(
        before.iter().map(|(line, _)| line + 2).collect::<Vec<_>>(),
        after.iter().map(|(line, _)| *line).collect::<Vec<_>>()
    );
    assert_eq!(
        before.iter().map(|(_, f)| f).collect::<Vec<_>>(),
        after.iter().map(|(_, f)| f).collect::<Vec<_>>(),
        "the same alerts, two lines down"
    );
}

#[test]
fn github_format_annotates_each_line_with_survivors() {
    let repo = fixture_repo("model_client");

    let run = check(repo.path(), &["--commit", "HEAD", "-q", "--format", "github"]);

    assert_eq!(run.code, 1, "{run:?}");
    let both = "tests/test_model_client.py::ParseReplyTest::test_cut_off_reply, \
                tests/test_model_client.py::ParseReplyTest::test_text_is_kept";
    assert_eq!(
        run.stdout.lines().collect::<Vec<_>>(),
        [
            "mutation delta: 2 of 6 mutants caught on 2 new lines; 2 lines with survivors",
            &format!(
                "::error file=model_client.py,line=14,col=8,title=mutdelta%3A 2 mutants survived::\
                 no test failed with the line changed:%0A  mutant 1 at column 8: force condition to False\
                 %0A    hint: no test where `stop_reason == \"max_tokens\"` is true checks the outcome: add one\
                 %0A  mutant 4 at column 23: replace \"max_tokens\" with \"\"\
                 %0A    hint: no test checks the text `\"max_tokens\"`: assert on the output or value holding it\
                 %0Aran under: {both}"
            ),
            &format!(
                "::error file=model_client.py,line=15,col=9,title=mutdelta%3A 2 mutants survived::\
                 no test failed with the line changed:%0A  mutant 5 at column 9: delete statement\
                 %0A    hint: no test expects the error `raise RuntimeError(\"[MAX_TOKENS] repl...` raises: add one that asserts it is raised\
                 %0A  mutant 6 at column 28: replace \"[MAX_TOKENS] reply was cut off at the … with \"\"\
                 %0A    hint: no test checks the text `\"[MAX_TOKENS] reply was cut off at th...`: assert on the output or value holding it\
                 %0Aran under: {CUT_OFF_TEST}"
            ),
        ]
    );
}

#[test]
fn github_format_annotates_each_line_no_test_runs() {
    let repo = fixture_repo("skipped_test");

    let run = check(repo.path(), &["--commit", "HEAD", "-q", "--format", "github"]);

    assert_eq!(run.code, 1, "{run:?}");
    let annotations: Vec<&str> = run.stdout.lines().filter(|line| line.starts_with("::")).collect();
    assert_eq!(
        annotations[2],
        "::error file=shipping.py,line=7,col=16,title=mutdelta%3A no test runs this line::\
         2 mutants not tested: no test runs this line%0A  mutant 7 at column 16: replace 12.5 with 0.0\
         %0A  mutant 8 at column 16: replace `12.5` with None",
        "{run:?}"
    );
    let lines: Vec<&str> = annotations.iter().map(|a| a.split(',').nth(1).unwrap()).collect();
    assert_eq!(lines, ["line=6", "line=8", "line=7"], "worst first: 6, 3 and 2 mutants: {run:?}");
}

/// The model_client fixture with a test whose name, and a source line whose text, hold what
/// would break out of Markdown and HTML.
fn hostile_model_client() -> tempfile::TempDir {
    let repo = fixture_repo("model_client");
    let file = repo.path().join("model_client.py");
    let source = std::fs::read_to_string(&file)
        .unwrap()
        .replace("\"[MAX_TOKENS] reply", "\"|x| <script>alert(1)</script> `tick` [MAX_TOKENS] reply");
    std::fs::write(&file, source).unwrap();
    let tests = repo.path().join("tests/test_model_client.py");
    let hostile_test = "\n\nimport pytest\n\n\n\
        @pytest.mark.parametrize(\"stop\", [\"max_tokens\"], ids=[\"a|b <script>x</script> `t` @here\"])\n\
        def test_hostile(stop):\n    try:\n        parse_reply({\"content\": \"x\", \"stop_reason\": stop})\n\
        \x20   except Exception:\n        pass\n";
    let mut text = std::fs::read_to_string(&tests).unwrap();
    text.push_str(hostile_test);
    std::fs::write(&tests, text).unwrap();
    git(repo.path(), &["commit", "-q", "-a", "--amend", "--no-edit"]);
    repo
}

const HOSTILE_TEST: &str =
    "tests/test_model_client.py::test_hostile[a|b &lt;script&gt;x&lt;/script&gt; `t` @here]";

#[test]
fn markdown_summary_shows_the_verdict_counts_and_survivors_with_hostile_names_as_text() {
    let repo = hostile_model_client();

    let run = check(repo.path(), &["--commit", "HEAD", "--format", "markdown"]);

    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.starts_with("## mutdelta: the check fails\n"), "Markdown alone on stdout: {run:?}");
    let html = markdown_to_html(&run.stdout);
    assert!(html.starts_with("<h2>mutdelta: the check fails</h2>\n"), "{html}");
    assert!(
        html.contains("<td>2 of 6</td>\n<td>2 of 2</td>\n<td>0 of 2</td>"),
        "caught, lines with survivors, lines no test runs: {html}"
    );
    let table = html.split("<h3>Lines no test checks</h3>").nth(1).unwrap().split("</table>").next().unwrap();
    let rows: Vec<&str> = table.split("<tr>").skip(2).collect();
    assert_eq!(rows.len(), 2, "a row per line with survivors: {table}");
    assert!(rows[1].starts_with("\n<td><code>model_client.py:15</code></td>"), "{}", rows[1]);
    assert!(
        rows[1].contains(
            "mutant 6 at column 28: replace &quot;|x| &lt;script&gt;alert(1)&lt;/script&gt; `tick` [… with &quot;&quot;"
        ),
        "the source's text shown as text, in its cell: {}",
        rows[1]
    );
    assert!(
        rows[1].contains(&format!("<code>{HOSTILE_TEST}</code>")),
        "the test's name as code: {}",
        rows[1]
    );
    assert_eq!(rows[1].matches("<td>").count(), 3, "no cell split by a pipe: {}", rows[1]);
    assert!(
        rows[1].contains("(hint: no test checks the text `&quot;|x| &lt;script&gt;alert(1)&lt;/script&gt; `tick`...`: assert on the output or value holding it)"),
        "the hint quotes the source as text: {}",
        rows[1]
    );
    assert!(!html.contains("<script"), "no markup from the repository: {html}");
    assert_eq!(html.matches("<details><summary>mutant ").count(), 4, "a folded diff per survivor: {html}");
    assert!(
        html.contains("<pre><code class=\"language-diff\">--- a/model_client.py\n+++ b/model_client.py\n@@ -14,3 +14,3 @@\n"),
        "{html}"
    );
    assert!(html.contains("\n+        pass\n"), "the deleted raise's diff: {html}");
}

#[test]
fn markdown_summary_is_appended_to_the_step_summary_and_the_usual_report_printed() {
    let repo = fixture_repo("model_client");
    let out = tempfile::tempdir().unwrap();
    let summary = out.path().join("step-summary.md");
    std::fs::write(&summary, "an earlier step's summary\n").unwrap();
    let python = python();

    let run = mutdelta_as(
        repo.path(),
        &[
            "check",
            "--python",
            python.to_str().unwrap(),
            "-j",
            "2",
            "--commit",
            "HEAD",
            "-q",
            "--format",
            "markdown",
        ],
        "",
        &[("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())],
    );

    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stdout, "mutation delta: 2 of 6 mutants caught on 2 new lines; 2 lines with survivors\n");
    let written = std::fs::read_to_string(&summary).unwrap();
    assert!(written.starts_with("an earlier step's summary\n## mutdelta: the check fails\n"), "{written}");
    let html = markdown_to_html(&written);
    assert!(html.contains("<td><code>model_client.py:14</code></td>"), "{html}");
}

#[test]
fn a_step_summary_that_cannot_be_written_is_refused_before_the_check() {
    let repo = fixture_repo("model_client");
    let out = tempfile::tempdir().unwrap();
    let summary = out.path().join("no-such-dir/summary.md");

    let run = mutdelta_as(
        repo.path(),
        &["check", "--commit", "HEAD", "--format", "markdown"],
        "",
        &[("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())],
    );

    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(
        crate::common::error_line(&run),
        format!(
            "error: GITHUB_STEP_SUMMARY names {}, which cannot be appended to (No such file or directory (os error 2)): point it at a writable file or unset it",
            summary.display()
        )
    );
    assert_eq!(run.stdout, "", "nothing checked: {run:?}");
}

#[test]
fn an_unknown_format_is_refused() {
    let repo = fixture_repo("model_client");

    let run = mutdelta(repo.path(), &["check", "--format", "xml"]);

    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("invalid value 'xml' for '--format <FORMAT>'"), "{run:?}");
    assert!(run.stderr.contains("[possible values: text, github, markdown]"), "{run:?}");
}

#[test]
fn junit_report_skips_ignored_mutants() {
    let repo = fixture_repo("model_client");
    let file = repo.path().join("model_client.py");
    let source = std::fs::read_to_string(&file)
        .unwrap()
        .replace("token limit\")\n", "token limit\")  # mutdelta: skip message wording is free\n");
    std::fs::write(&file, source).unwrap();
    let out = tempfile::tempdir().unwrap();
    let junit = out.path().join("junit.xml");

    let run = check(repo.path(), &["--base", "HEAD~1", "--junit", junit.to_str().unwrap()]);

    assert_eq!(run.code, 1, "line 14 still has survivors: {run:?}");
    let xml = read_valid_junit(&junit);
    let skipped: Vec<&str> = xml.lines().filter(|line| line.contains("<skipped ")).collect();
    assert_eq!(
        skipped,
        ["      <skipped type=\"Ignored\" message=\"Ignored: message wording is free\"></skipped>"; 2],
        "{xml}"
    );
    assert!(
        xml.contains(
            "<testsuite name=\"model_client.py\" tests=\"6\" failures=\"2\" errors=\"0\" skipped=\"2\""
        ),
        "{xml}"
    );
}

#[test]
fn kills_lost_by_edited_tests_appear_in_the_html_junit_and_sarif_reports() {
    let repo = fixture_repo_variant("kill_loss", "weakened");
    let out = tempfile::tempdir().unwrap();
    let (html, junit, sarif) =
        (out.path().join("r.html"), out.path().join("r.xml"), out.path().join("r.sarif"));

    let run = check(
        repo.path(),
        &[
            "--commit",
            "HEAD",
            "--html",
            html.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
            "--sarif",
            sarif.to_str().unwrap(),
        ],
    );

    assert_eq!(run.code, 1, "{run:?}");
    let (dom, _) = browse(&html);
    let audit = dom.split("<section class=\"audit\" id=\"audit\">").nth(1).expect("the audit section");
    assert!(
        audit.contains(
            "7 kills lost of 14 the edited tests made before the change (3 edited tests, 20 mutants tried)"
        ),
        "{audit}"
    );
    assert!(
        audit.contains("<code>billing/invoice.py:9:17</code> <strong>replace + with -</strong> — it survives after the change"),
        "{audit}"
    );
    assert!(
        audit.contains("<span class=\"ins\">+    return base - Decimal(\"0.025\")</span>"),
        "its diff: {audit}"
    );
    let xml = read_valid_junit(&junit);
    assert_eq!(xml.matches("<failure type=\"LostKill\"").count(), 7, "{xml}");
    let log = read_valid_sarif(&sarif);
    let lost: Vec<_> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["ruleId"] == "MUT-lost")
        .map(|r| r["locations"][0]["physicalLocation"]["region"]["startLine"].as_u64().unwrap())
        .collect();
    assert_eq!(lost, [7, 9, 13, 13, 17, 17, 18], "{log}");
}

#[test]
fn each_survivor_carries_the_hint_of_the_test_it_asks_for_in_the_text_and_json_reports() {
    let repo = fixture_repo("model_client");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 1, "{run:?}");
    let header = "[MUT-survived] model_client.py:15:9: delete statement\n";
    let after = &run.stdout[run.stdout.find(header).unwrap_or_else(|| panic!("{run:?}")) + header.len()..];
    assert!(
        after.starts_with("    hint: no test expects the error `raise RuntimeError(\"[MAX_TOKENS] repl...` raises: add one that asserts it is raised\n"),
        "the hint under the survivor's header: {run:?}"
    );
    let report = read_valid_report(&json);
    for mutant in report["files"]["model_client.py"]["mutants"].as_array().unwrap() {
        let hint = mutant["hint"].as_str();
        match mutant["status"].as_str().unwrap() {
            "Survived" => assert!(hint.is_some_and(|h| h.starts_with("no test ")), "{mutant}"),
            _ => assert!(hint.is_none(), "only a survivor asks for a test: {mutant}"),
        }
    }
    let forced = mutants_on_line(&report, "model_client.py", 14)
        .into_iter()
        .find(|m| m["replacement"] == "False")
        .expect("the condition forced to False");
    assert_eq!(
        forced["hint"],
        "no test where `stop_reason == \"max_tokens\"` is true checks the outcome: add one"
    );
}
