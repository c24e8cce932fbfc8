/*
 * Live Code for Executable Theory: connects the page's "Live Code" button to a Jupyter server on this
 * machine (started by `make live`), using the vendored thebe >= 0.9, so the chapter's ipywidgets run their
 * Python callbacks. Nothing here talks to Binder or to a CDN.
 *
 * `make live` prints  http://127.0.0.1:<book port>/index.html#live-port=<jupyter port>&live-token=<token>.
 * On load this script moves those two values from the URL fragment (never sent to any server) into this
 * tab's sessionStorage and removes them from the address bar. Only a port is accepted, never a host: the
 * kernel is always http://127.0.0.1:<port>.
 *
 * sphinx-thebe 0.3 defines a global initThebe() that loads thebe 0.8 from unpkg for Binder; sphinx-book-theme's
 * "Live Code" button calls initThebe(). We replace it with liveInitThebe() below.
 */
(function () {
  "use strict";

  var STORAGE_KEY = "theorybook-live";
  var REQUIREJS_CDN = "https://cdnjs.cloudflare.com/ajax/libs/require.js/2.3.6/require.min.js";
  // _static/ of this build, taken from this script's own URL, so pages at any depth resolve the same files.
  var scriptEl = document.currentScript;
  var STATIC = scriptEl ? new URL(".", scriptEl.src).href : new URL("_static/", document.baseURI).href;
  var VENDOR = STATIC + "vendor/";

  function readFragment() {
    var hash = window.location.hash.replace(/^#/, "");
    if (hash.indexOf("live-token=") < 0) return;
    var params = new URLSearchParams(hash);
    var port = params.get("live-port");
    var token = params.get("live-token");
    if (port && /^[0-9]{2,5}$/.test(port) && token && /^[0-9a-f]{32,128}$/.test(token)) {
      try {
        window.sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ port: port, token: token }));
      } catch (e) {
        console.warn("[live] sessionStorage unavailable; Live Code works on this page only", e);
        window.__theorybookLive = { port: port, token: token };
      }
    }
    params.delete("live-port");
    params.delete("live-token");
    var rest = params.toString();
    window.history.replaceState(null, "", window.location.pathname + window.location.search + (rest ? "#" + rest : ""));
  }

  function liveSettings() {
    if (window.__theorybookLive) return window.__theorybookLive;
    try {
      var raw = window.sessionStorage.getItem(STORAGE_KEY);
      return raw ? JSON.parse(raw) : null;
    } catch (e) {
      return null;
    }
  }

  function button() {
    var b = document.querySelector(".thebe-launch-button");
    if (!b) {
      var h1 = document.querySelector("section h1") || document.querySelector("h1");
      b = document.createElement("button");
      b.className = "thebe-launch-button";
      if (h1) h1.insertAdjacentElement("afterend", b);
      else document.body.prepend(b);
    }
    return b;
  }

  function say(text, state) {
    var b = button();
    b.textContent = text;
    b.setAttribute("data-live-state", state);
    document.documentElement.setAttribute("data-live-state", state);
  }

  // thebe-core fetches require.js from cdnjs before it can build any widget; serve the vendored copy instead.
  function shimRequireJsFetch() {
    if (window.__theorybookFetchShim) return;
    window.__theorybookFetchShim = true;
    var realFetch = window.fetch.bind(window);
    window.fetch = function (input, init) {
      var url = typeof input === "string" ? input : input && input.url;
      if (url === REQUIREJS_CDN) return realFetch(VENDOR + "requirejs/require.js", init);
      return realFetch(input, init);
    };
  }

  function loadThebe() {
    if (window.thebe && window.thebe.bootstrap) return Promise.resolve(window.thebe);
    return new Promise(function (resolve, reject) {
      var css = document.createElement("link");
      css.rel = "stylesheet";
      css.href = VENDOR + "thebe/thebe.css";
      document.head.appendChild(css);
      var s = document.createElement("script");
      s.src = VENDOR + "thebe/index.js";
      s.onload = function () { resolve(window.thebe); };
      s.onerror = function () { reject(new Error("could not load " + s.src + " (run `make vendor`)")); };
      document.head.appendChild(s);
    });
  }

  // Mark MyST-NB code cells for thebe. Every executable cell gets its own output element, because thebe
  // pairs sources and outputs by position; outputs stay where they are (hide-input cells keep them visible).
  function markCells() {
    var n = 0;
    document.querySelectorAll("div.cell").forEach(function (cell) {
      var pre = cell.querySelector(".cell_input pre");
      if (!pre) return;
      pre.setAttribute("data-executable", "true");
      pre.setAttribute("data-language", "python");
      var out = cell.querySelector(":scope > .cell_output");
      if (!out) {
        out = document.createElement("div");
        out.className = "cell_output docutils container";
        cell.appendChild(out);
      }
      out.setAttribute("data-output", "");
      cell.querySelectorAll("button.copybtn").forEach(function (el) { el.remove(); });
      n += 1;
    });
    return n;
  }

  function pageKernelPath() {
    var el = document.querySelector("script[type='text/x-thebe-config']");
    var m = el && /path:\s*"([^"]*)"/.exec(el.textContent || "");
    return m ? m[1] : ".";
  }

  var started = null;

  function liveInitThebe() {
    if (started) return started;
    var live = liveSettings();
    if (!live) {
      say("Live Code needs a kernel on your machine: run `make live` and open the URL it prints.", "no-server");
      return Promise.resolve(null);
    }
    var base = "http://127.0.0.1:" + live.port;
    shimRequireJsFetch();
    say("Live Code: loading thebe…", "loading");
    started = loadThebe()
      .then(function (thebe) {
        var cells = markCells();
        thebe.on("status", function (_evt, data) {
          if (data && data.subject === "kernel" && data.status) say("Live Code: kernel " + data.status, "kernel-" + data.status);
        });
        thebe.on("error", function (_evt, data) {
          console.warn("[live] thebe error:", data && data.message);
        });
        say("Live Code: connecting to " + base + "…", "connecting");
        return thebe.bootstrap({
          useBinder: false,
          useJupyterLite: false,
          requestKernel: true,
          mountActivateWidget: false,
          mountStatusWidget: false,
          predefinedOutput: true,
          selector: "[data-executable]",
          outputSelector: "[data-output]",
          mathjaxUrl: "", // thebe's latex renderer wants MathJax 2 from a CDN; the page's MathJax 3 does the math
          savedSessionOptions: { enabled: false },
          serverSettings: { baseUrl: base, wsUrl: base.replace(/^http/, "ws"), token: live.token, appendToken: true },
          kernelOptions: { kernelName: "python3", path: pageKernelPath() },
        }).then(function (res) {
          if (!res || !res.session) throw new Error("no kernel session (is `make live` still running?)");
          say("Live Code: running the chapter (" + cells + " cells)…", "running");
          return res.notebook.executeAll(true);
        });
      })
      .then(function (results) {
        var failed = (results || []).filter(function (r) { return !r || r.error; }).length;
        if (failed) say("Live Code: a cell failed; see its output", "error");
        else say("Live Code: connected — widgets run Python on your machine", "ready");
        return results;
      })
      .catch(function (err) {
        console.warn("[live] " + (err && err.message ? err.message : err));
        say("Live Code could not connect: " + (err && err.message ? err.message : err), "error");
        started = null;
        return null;
      });
    return started;
  }

  readFragment();
  window.theorybookLive = { init: liveInitThebe, settings: liveSettings };
  window.initThebe = liveInitThebe;
  // sphinx-thebe.js is loaded async and defines its own global initThebe; take it back once it has run.
  window.addEventListener("load", function () { window.initThebe = liveInitThebe; });
})();
