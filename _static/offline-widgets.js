/*
 * Saved ipywidgets, offline and with MathJax 3. Loaded before require.js (priority 200, set by
 * scripts/offline_assets.py).
 *
 * 1. The ipywidgets HTML manager (vendored at _static/vendor/html-manager/embed-amd.js) registers itself with
 *    require.js as "@jupyter-widgets/html-manager/dist/..." (and base/controls/output as "@jupyter-widgets/...")
 *    and loads its icon fonts relative to those module ids, i.e. relative to the page. A require.js config
 *    object defined before require.js loads maps the ids to the vendored folder, so the fonts come from
 *    _static/vendor/html-manager/ on every page.
 * 2. @jupyter-widgets/controls typesets HTML/Label widgets with the MathJax 2 call MathJax.Hub.Queue; the book
 *    loads MathJax 3, so we provide that one call on top of MathJax 3's typesetPromise.
 */
(function () {
  "use strict";
  var here = document.currentScript ? document.currentScript.src : document.baseURI;
  var vendor = new URL("vendor/", here).href;
  if (typeof window.require === "undefined" && typeof window.define === "undefined") {
    window.require = {
      paths: {
        "@jupyter-widgets/html-manager/dist": vendor + "html-manager",
        "@jupyter-widgets": vendor + "html-manager", // base/controls/output, bundled in embed-amd.js
      },
    };
  }

  function shimMathJax2() {
    var mj = window.MathJax;
    if (!mj || mj.Hub) return;
    mj.Hub = {
      Queue: function () {
        for (var i = 0; i < arguments.length; i++) {
          var job = arguments[i];
          if (Array.isArray(job) && job[0] === "Typeset" && job[2] && mj.typesetPromise) {
            var el = job[2];
            (mj.startup && mj.startup.promise ? mj.startup.promise : Promise.resolve())
              .then(function () { return mj.typesetPromise([el]); })
              .catch(function (err) { console.warn("[offline-widgets] MathJax typeset failed", err); });
          }
        }
      },
    };
  }
  // MathJax 3 is a deferred script: it has run by DOMContentLoaded, before widgets render on "load".
  document.addEventListener("DOMContentLoaded", shimMathJax2);
  window.addEventListener("load", shimMathJax2);
})();
