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

  function tests(label, names) {
    if (!names || names.length === 0) return null;
    var shown = names.slice(0, 5);
    var line = el("div", { class: "tests" }, label + ": ");
    shown.forEach(function (name, i) {
      if (i > 0) line.append(", ");
      line.append(el("code", {}, name));
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
      el("tr", {}, el("th", {}, "status"), el("th", {}, "mutants")));
    data.counts.forEach(function (pair) {
      counts.append(el("tr", { id: "count-" + pair[0] }, el("td", {}, badge(pair[0])), el("td", {}, pair[1])));
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
    var box = el("div", { class: "mutant", id: "mutant-" + mutant.id }, head);
    if (mutant.status === "RuntimeError" && mutant.reason) box.append(el("div", { class: "tests" }, mutant.reason));
    return add(box, [diff(mutant.diff), tests("ran under", mutant.coveredBy)]);
  }

  function briefList(mutants) {
    if (mutants.length === 0) return null;
    var list = el("ul", { class: "brief" });
    mutants.forEach(function (mutant) {
      var by = mutant.killedBy && mutant.killedBy.length ? " by " + mutant.killedBy.slice(0, 2).join(", ") : "";
      var why = mutant.status === "Killed" ? by : mutant.reason ? ": " + mutant.reason : "";
      list.append(el("li", {}, badge(mutant.status), mutant.description + why));
    });
    return list;
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
      var rest = row.mutants.filter(function (m) { return !m.diff; });
      var cell = el("td", { colspan: "3" });
      inFull.forEach(function (mutant) { cell.append(mutantDetails(mutant)); });
      add(cell, [briefList(rest)]);
      table.append(el("tr", { class: "mutants", "data-mutants-of": row.n }, cell));
    });
    return el("section", { class: "file", "data-path": file.path },
      el("header", {}, el("h2", {}, file.path), el("span", { class: "muted" }, summary.join(" · "))),
      table);
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
})();
