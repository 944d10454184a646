// Draws the report from the JSON beside this script. Everything from the report goes into the
// page as text nodes and attribute values, never as markup.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var root = document.getElementById("report");

  // Appends the children that are there (a part with nothing to show is null) to node.
  function add(node, children) {
    children.forEach(function (child) {
      if (child === null || child === undefined || child === false) return;
      node.append(typeof child === "object" ? child : String(child));
    });
    return node;
  }

  function el(tag, attributes) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (name) {
      node.setAttribute(name, attributes[name]);
    });
    return add(node, Array.prototype.slice.call(arguments, 2));
  }

  function plural(n, one, many) {
    return n + " " + (n === 1 ? one : many);
  }

  function badge(status) {
    return el("span", { class: "badge status-" + status }, status);
  }

  // Anchors are numbered by the file's place on the page, never built from its path.
  function anchor(fileIndex, line) {
    return "L" + fileIndex + "-" + line;
  }

  var fileIndex = {};
  data.files.forEach(function (file, index) {
    fileIndex[file.path] = index;
  });
  // A test's entry in the Tests section, numbered by its place there.
  var testIndex = new Map();
  data.tests.forEach(function (test, index) {
    testIndex.set(test.name, index);
  });

  // The statuses shown: those `?status=A,B` names, else all.
  var asked = new URLSearchParams(location.search).get("status");
  var shownStatus = {};
  data.counts.forEach(function (pair) {
    shownStatus[pair[0]] = asked === null || asked.split(",").indexOf(pair[0]) >= 0;
  });

  function testName(name) {
    var code = el("code", {}, name);
    return testIndex.has(name) ? el("a", { href: "#T" + testIndex.get(name) }, code) : code;
  }

  function tests(label, names) {
    if (!names || names.length === 0) return null;
    var shown = names.slice(0, 5);
    var line = el("div", { class: "tests" }, label + ": ");
    shown.forEach(function (name, i) {
      if (i > 0) line.append(", ");
      line.append(testName(name));
    });
    if (names.length > shown.length) line.append(" and " + (names.length - shown.length) + " more");
    return line;
  }

  function diff(text) {
    if (!text) return null;
    var pre = el("pre", { class: "diff" });
    text.split("\n").forEach(function (line, i, lines) {
      if (i === lines.length - 1 && line === "") return;
      var kind = line.startsWith("+") && !line.startsWith("+++") ? "ins"
        : line.startsWith("-") && !line.startsWith("---") ? "del" : "";
      pre.append(kind ? el("span", { class: kind }, line) : line, "\n");
    });
    return pre;
  }

  function header() {
    var scoreClass = data.score === null ? "" : parseFloat(data.score) >= 80 ? "high"
      : parseFloat(data.score) >= 60 ? "medium" : "low";
    var parts = [
      data.score === null ? "nothing scored" : data.caught + " of " + data.scored + " mutants caught",
      plural(data.addedLines, "new line", "new lines"),
      plural(data.linesWithSurvivors, "line", "lines") + " with survivors",
    ];
    if (data.linesNotRun > 0) parts.push(plural(data.linesNotRun, "line", "lines") + " no test runs");
    parts.push("time " + data.seconds + " s");
    var counts = el("table", { class: "counts" },
      el("tr", {}, el("th", {}, "status"), el("th", {}, "mutants"), el("th", {}, "shown")));
    data.counts.forEach(function (pair) {
      var show = el("input", { type: "checkbox", "data-show": pair[0], "aria-label": "show " + pair[0] });
      if (shownStatus[pair[0]]) show.setAttribute("checked", "");
      show.addEventListener("change", function () {
        shownStatus[pair[0]] = show.checked;
        filter();
        var statuses = Object.keys(shownStatus).filter(function (status) { return shownStatus[status]; });
        try {
          history.replaceState(null, "", "?status=" + statuses.join(",") + location.hash);
        } catch (e) {
          // Some browsers refuse a new query on a file: URL; the filter holds all the same.
        }
      });
      counts.append(el("tr", { id: "count-" + pair[0] },
        el("td", {}, badge(pair[0])), el("td", {}, pair[1]), el("td", {}, show)));
    });
    return el("header", {},
      el("h1", {}, "mutdelta: mutation score of the change"),
      el("p", { class: "score " + scoreClass, id: "score" }, data.score === null ? "no score" : data.score),
      el("p", { class: "muted", id: "summary" }, parts.join(" · ")),
      counts);
  }

  function worstLines(lines, title) {
    if (lines.length === 0) return null;
    var list = el("ol");
    lines.forEach(function (line) {
      var what = line.survived > 0 ? plural(line.survived, "survivor", "survivors")
        : "no test runs it";
      list.append(el("li", {},
        el("a", { href: "#" + anchor(fileIndex[line.file], line.line) }, line.file + ":" + line.line),
        " — " + what + (line.description ? " (" + line.description + ")" : "")));
    });
    return el("section", { class: "worst" }, el("header", {}, el("strong", {}, title)), list);
  }

  function mutantDetails(mutant) {
    var head = el("div", {}, badge(mutant.status),
      "mutant " + mutant.id + ", column " + mutant.column + ": ", el("strong", {}, mutant.description));
    if (mutant.likelyEquivalent) head.append(" (likely equivalent: " + mutant.likelyEquivalent + ")");
    var box = el("div", { class: "mutant", id: "mutant-" + mutant.id, "data-status": mutant.status }, head);
    if (mutant.status === "RuntimeError" && mutant.reason) box.append(el("div", { class: "tests" }, mutant.reason));
    if (mutant.hint) box.append(el("div", { class: "hint" }, "hint: " + mutant.hint));
    return add(box, [diff(mutant.diff), tests("ran under", mutant.coveredBy)]);
  }

  function isCaught(mutant) {
    return mutant.status === "Killed" || mutant.status === "Timeout";
  }

  function briefList(mutants) {
    if (mutants.length === 0) return null;
    var list = el("ul", { class: "brief" });
    mutants.forEach(function (mutant) {
      var item = el("li", { "data-status": mutant.status }, badge(mutant.status), mutant.description);
      if (mutant.status === "Killed" && mutant.killedBy && mutant.killedBy.length) {
        item.append(" by ");
        mutant.killedBy.slice(0, 2).forEach(function (name, i) {
          if (i > 0) item.append(", ");
          item.append(testName(name));
        });
      } else if (!isCaught(mutant) && mutant.reason) {
        item.append(": " + mutant.reason);
      }
      list.append(item);
    });
    return list;
  }

  // The caught mutants of a line, folded away under one line that counts them.
  function caughtList(mutants) {
    if (mutants.length === 0) return null;
    return el("details", { class: "caught" },
      el("summary", {}, plural(mutants.length, "mutant", "mutants") + " caught"), briefList(mutants));
  }

  function marks(mutants) {
    var counts = {};
    mutants.forEach(function (mutant) {
      counts[mutant.status] = (counts[mutant.status] || 0) + 1;
    });
    var cell = el("td", { class: "marks" });
    Object.keys(counts).sort().forEach(function (status) {
      cell.append(el("span", { class: "badge status-" + status, title: status }, counts[status] + " " + status));
    });
    return cell;
  }

  function fileSection(file, index) {
    var summary = [plural(file.mutants, "mutant", "mutants"), file.caught + " caught",
      plural(file.linesWithSurvivors, "line", "lines") + " with survivors"];
    if (file.linesNotRun > 0) summary.push(plural(file.linesNotRun, "line", "lines") + " no test runs");
    var table = el("table", { class: "code" });
    file.rows.forEach(function (row) {
      if (row.gap !== undefined) {
        table.append(el("tr", { class: "gap" }, el("td", { colspan: "3" },
          "⋯ " + plural(row.gap, "unchanged line", "unchanged lines"))));
        return;
      }
      var missed = row.mutants.filter(function (m) { return m.status === "Survived" || m.status === "NoCoverage"; });
      var classes = ["line"];
      if (row.added) classes.push("added");
      if (row.mutants.some(function (m) { return m.status === "Survived"; })) classes.push("survived");
      else if (missed.length > 0) classes.push("not-run");
      table.append(el("tr", { class: classes.join(" "), "data-line": row.n, id: anchor(index, row.n) },
        el("td", { class: "num" }, el("a", { href: "#" + anchor(index, row.n) }, row.n)),
        marks(row.mutants),
        el("td", { class: "src" }, row.text)));
      if (row.mutants.length === 0) return;
      var inFull = row.mutants.filter(function (m) { return m.diff; });
      var rest = row.mutants.filter(function (m) { return !m.diff && !isCaught(m); });
      var caught = row.mutants.filter(function (m) { return !m.diff && isCaught(m); });
      var cell = el("td", { colspan: "3" });
      inFull.forEach(function (mutant) { cell.append(mutantDetails(mutant)); });
      add(cell, [briefList(rest), caughtList(caught)]);
      table.append(el("tr", { class: "mutants", "data-mutants-of": row.n }, cell));
    });
    // A file whose every mutant was caught (or settled without a test) starts folded.
    var attributes = { class: "file", "data-path": file.path };
    if (file.linesWithSurvivors + file.linesNotRun > 0) attributes.open = "";
    return el("details", attributes,
      el("summary", {}, el("h2", {}, file.path), " ", el("span", { class: "muted" }, summary.join(" · "))),
      table);
  }

  function mutantLinks(label, mutants) {
    if (mutants.length === 0) return null;
    var line = el("div", { class: "tests" }, label + ": ");
    mutants.forEach(function (mutant, i) {
      if (i > 0) line.append(", ");
      line.append(el("a", { href: "#" + anchor(fileIndex[mutant.file], mutant.line) },
        "mutant " + mutant.id + " (" + mutant.file + ":" + mutant.line + ")"), " " + mutant.description);
    });
    return line;
  }

  function testsSection() {
    if (data.tests.length === 0) return null;
    var list = el("ol");
    data.tests.forEach(function (test, index) {
      var what = test.killed.length > 0 ? "killed " + plural(test.killed.length, "mutant", "mutants")
        : "killed none";
      list.append(el("li", { id: "T" + index, class: "test" },
        el("div", {}, el("code", {}, test.name), " — ran " + plural(test.ran, "mutant", "mutants") + ", " + what),
        mutantLinks("killed", test.killed),
        mutantLinks("ran, and it survived", test.survived)));
    });
    return el("details", { class: "tests", id: "tests" },
      el("summary", {}, el("strong", {}, "Tests: "), plural(data.tests.length, "test", "tests") + " ran the mutants"),
      list);
  }

  // Shows only the mutants of the statuses ticked, and a line's list only while it shows one.
  function filter() {
    root.querySelectorAll("[data-status]").forEach(function (node) {
      node.hidden = !shownStatus[node.getAttribute("data-status")];
    });
    root.querySelectorAll("details.caught").forEach(function (node) {
      node.hidden = !node.querySelector("li:not([hidden])");
    });
    root.querySelectorAll("tr.mutants").forEach(function (node) {
      node.hidden = !node.querySelector(".mutant:not([hidden]), li:not([hidden])");
    });
  }

  // A link into a folded file or the Tests section unfolds what holds its target.
  function reveal() {
    var target = location.hash.length > 1 ? document.getElementById(location.hash.slice(1)) : null;
    if (!target) return;
    for (var node = target.parentElement; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
    target.scrollIntoView();
  }

  function audit() {
    var a = data.audit;
    if (!a || (a.editedTests.length === 0 && a.lost.length === 0)) return null;
    var section = el("section", { class: "audit", id: "audit" },
      el("header", {}, el("strong", {}, "Kill-loss audit: "),
        plural(a.lost.length, "kill", "kills") + " lost of " + a.killedBefore + " the edited tests made before the change (" +
        plural(a.editedTests.length, "edited test", "edited tests") + ", " + plural(a.mutants, "mutant", "mutants") + " tried)"));
    var list = el("ol");
    a.lost.forEach(function (lost) {
      var after = lost.statusAfter === "NoCoverage" ? "no test runs it after the change" : "it survives after the change";
      list.append(el("li", { class: "lost" },
        el("div", {}, badge(lost.statusAfter), el("code", {}, lost.file + ":" + lost.line + ":" + lost.column), " ",
          el("strong", {}, lost.description || "mutant"), " — " + after),
        tests("killed before the change by", lost.killedBefore),
        diff(lost.diff),
        tests("ran after the change under", lost.coveredAfter)));
    });
    if (a.lost.length > 0) section.append(list);
    return section;
  }

  root.textContent = "";
  root.append(header());
  if (data.incomplete) root.append(el("p", { class: "incomplete", id: "incomplete" }, data.incomplete));
  var worst = worstLines(data.worst.slice(0, 20), "Worst lines first");
  if (worst) root.append(worst);
  var lost = audit();
  if (lost) root.append(lost);
  data.files.forEach(function (file, index) { root.append(fileSection(file, index)); });
  var testList = testsSection();
  if (testList) root.append(testList);
  filter();
  reveal();
  window.addEventListener("hashchange", reveal);
})();
