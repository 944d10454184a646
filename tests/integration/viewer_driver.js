// Drives Stryker's viewer as a user would: opens its Tests view on one test file, clicks each
// test and reads its drawer; writes what it saw, one line each, into <pre id="seen">. The
// viewer draws inside shadow roots, which a dump of the document does not show.
(function () {
  "use strict";
  var app = document.querySelector("mutation-test-report-app");
  var seen = [];
  window.addEventListener("error", function (event) { seen.push("error: " + event.message); });
  app.report = JSON.parse(document.getElementById("report").textContent);

  function deep(root, selector) {
    var found = [];
    (function walk(node) {
      if (node.shadowRoot) walk(node.shadowRoot);
      node.querySelectorAll(selector).forEach(function (element) { found.push(element); });
      node.querySelectorAll("*").forEach(function (element) {
        if (element.shadowRoot) walk(element.shadowRoot);
      });
    })(root);
    return found;
  }

  // The text a user reads in node, shadow roots included, spaces squashed.
  function text(node) {
    function of(node) {
      if (node.nodeType === Node.TEXT_NODE) return node.data;
      if (node.nodeName === "STYLE" || node.nodeName === "SCRIPT") return "";
      var inside = node.shadowRoot ? of(node.shadowRoot) : "";
      node.childNodes.forEach(function (child) { inside += of(child); });
      return inside;
    }
    return of(node).replace(/\s+/g, " ").trim();
  }

  function finish() {
    document.getElementById("seen").textContent = seen.join("\n");
  }

  // Calls then() once ready() holds, checking every 100 ms for 10 s (of the page's time).
  function when(what, ready, then) {
    var tries = 0;
    (function poll() {
      if (ready()) return then();
      if (++tries > 100) {
        seen.push("gave up waiting for " + what);
        return finish();
      }
      setTimeout(poll, 100);
    })();
  }

  var file = document.getElementById("report").getAttribute("data-test-file");
  when("the viewer", function () { return text(app).indexOf("Tests") >= 0; }, function () {
    seen.push("tabs: " + deep(app, "a[href*='#']").map(text).filter(function (t) {
      return /Mutants|Tests/.test(t);
    }).join(", "));
    location.hash = "#test/" + file;
    when("the tests of " + file, function () { return deep(app, "button[data-test-id]").length > 0; }, function () {
      var buttons = deep(app, "button[data-test-id]");
      var next = 0;
      (function click() {
        if (next === buttons.length) return finish();
        var button = buttons[next++];
        seen.push("test: " + text(button));
        button.click();
        var drawer = function () { return deep(app, "mte-drawer-test")[0]; };
        var ready = function () {
          return text(drawer()).indexOf(text(button)) >= 0 && deep(drawer(), "li").length > 0;
        };
        when("the drawer of " + text(button), ready, function () {
          deep(drawer(), "li").forEach(function (item) { seen.push("  " + text(item)); });
          button.click();
          setTimeout(click, 100);
        });
      })();
    });
  });
})();
