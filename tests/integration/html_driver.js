// Uses mutdelta's HTML page as a user would, from a page holding it in a frame (Chromium run
// with --allow-file-access-from-files, so the frame's document is reachable): unticks Killed,
// then follows the first test link of the mutant the frame's data-follow names; writes what
// it saw into <pre id="seen">.
(function () {
  "use strict";
  var frame = document.getElementById("report");
  var seen = [];
  frame.onload = function () {
    var page = frame.contentDocument;
    page.querySelector("input[data-show=Killed]").click();
    var caught = Array.prototype.map.call(page.querySelectorAll("details.caught"), function (node) {
      return node.hidden ? "hidden" : "shown";
    });
    seen.push("caught mutants after unticking Killed: " + caught.join(", "));
    seen.push("address: " + frame.contentWindow.location.search);
    var link = page.getElementById(frame.getAttribute("data-follow")).querySelector(".tests a");
    seen.push("following: " + link.textContent);
    link.click();
    setTimeout(function () {
      var target = page.getElementById(frame.contentWindow.location.hash.slice(1));
      seen.push("tests: " + (page.getElementById("tests").open ? "unfolded" : "folded"));
      seen.push("at: " + target.querySelector("div").textContent);
      document.getElementById("seen").textContent = seen.join("\n");
    }, 200);
  };
  frame.src = frame.getAttribute("data-src");
})();
