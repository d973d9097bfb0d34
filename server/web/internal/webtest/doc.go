// Package webtest tests the web page of package web in a real headless Chromium (Debian's
// chromium), driven over the Chrome DevTools Protocol with chromedp. The tests share one
// browser per test binary; each opens its own tab in a browser context of its own (its own
// storage, cache and permissions, as a fresh profile), and they run in parallel.
//
// The page talks to the real service of package server (its handler, the ledger in SQLite in
// a temporary directory, a fixed clock) on a loopback httptest server. A thin front records
// each exchange, so that the tests check what the page shows against what the server answered
// and what its ledger holds, and can lose an answer on its way back as a failing proxy would,
// to test the page's retry against the server's idempotency.
//
// The tests skip when no Chromium is installed. Set TRACEPRIV_CHROMIUM to choose the browser and
// TRACEPRIV_WEBTEST_SCREENSHOTS to a directory to keep the screenshots the tests take and check.
package webtest
