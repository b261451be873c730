// Opened from disk (file://), the book is a set of local files, and the browser refuses
// the fetch() with which Sphinx's search page loads each hit's page to show a summary
// under it: every hit would log a CORS error and an unhandled rejection. From disk the
// search page lists the hits without summaries; served over HTTP (make serve, a web
// host) it shows them as usual.
if (window.location.protocol === "file:" && typeof DOCUMENTATION_OPTIONS !== "undefined") {
  DOCUMENTATION_OPTIONS.SHOW_SEARCH_SUMMARY = false;
}
