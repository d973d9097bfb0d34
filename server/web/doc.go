// Package web serves the web page of `tracepriv serve`: drop a trace and see the original and
// sanitised traces on a map with the certificate's summary, try the online mechanism by clicking
// the map, and watch the budget drain in the ledger.
//
// Package server mounts the page by default (server.Options.Web); a program
// that serves the API (api, an http.Handler) its own way mounts the page
// beside it:
//
//	mux := http.NewServeMux()
//	mux.Handle("/", web.Handler()) // the page at /, its assets under /static/
//	mux.Handle("/v1/", api)        // the API of package server, on the same origin
//	srv := &http.Server{Addr: "localhost:8080", Handler: mux}
//	return srv.ListenAndServe()
//
// The page and its assets are embedded, so the server builds with `go build` alone: the page is
// plain JavaScript and CSS (static/app.js, static/app.css) over Leaflet 1.9.4, vendored from the
// npm registry into static/vendor/leaflet with its licence (see vendor.sh). The map's background
// is a bundled offline layer of public-domain Natural Earth data (static/basemap, made by
// basemap.sh), so the page makes no request beyond its own origin: a public tile server would
// learn from each tile where the person looks. New with Options.Tiles draws a self-hosted tile
// server instead.
//
// By default the page draws on the person's device: it loads the WebAssembly module that
// package server serves at /wasm/ (New with Options.Loader pins its loader by digest), charges
// the person's budget before drawing, and sends no true location; the server's own mechanisms
// (proxy mode) run only when the person chooses them on the page (docs/device.md).
//
// The page talks to the API of package server on the same origin. It reads the person's id and
// token from the URL fragment (/#id=ID&token=TOKEN), which a browser never sends to a server, and
// sends the token only as an Authorization header.
package web
