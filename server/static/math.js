// Render the TeX in every .math element with the vendored KaTeX auto-render. Text that is
// not valid TeX stays as it was; nothing here is needed to read a page.
(function () {
  "use strict";
  var options = {
    delimiters: [
      { left: "$$", right: "$$", display: true },
      { left: "\\[", right: "\\]", display: true },
      { left: "$", right: "$", display: false },
      { left: "\\(", right: "\\)", display: false }
    ],
    ignoredTags: ["script", "noscript", "style", "textarea", "pre", "code", "option"],
    errorCallback: function () {},
    strict: "ignore"
  };
  function render() {
    if (typeof window.renderMathInElement !== "function") return;
    var nodes = document.querySelectorAll(".math");
    for (var i = 0; i < nodes.length; i++) {
      window.renderMathInElement(nodes[i], options);
    }
    document.documentElement.classList.add("math-rendered");
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", render);
  } else {
    render();
  }
})();
