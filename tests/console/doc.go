// Package console tests the web console (/ui/) in a real browser: Debian's
// Chromium, headless, driven over the DevTools protocol with chromedp, on a
// cluster of the test kit (sluicetest: embedded NATS and kfake) with REST
// authentication on. A test signs in as a user would, clicks and types,
// and asserts what the page shows and what the REST API then answers.
//
// The suite needs a browser, which `make test` does not: without
// SLUICE_TEST_CONSOLE=1 every test is skipped. `make test-console` sets it;
// then a missing Chromium fails the run, naming the package to install.
//
//	SLUICE_TEST_CONSOLE=1            run the suite
//	SLUICE_CHROMIUM=/path/to/chrome  the browser (default: /usr/bin/chromium, else chromium on PATH)
//	SLUICE_CONSOLE_ARTIFACTS=DIR     where a failed step leaves its screenshot and DOM
//	                                 (default: <repo>/.cache/console-artifacts)
//	SLUICE_CONSOLE_BENCH=FILE        run the fleet home benchmark (5,000 connectors) and
//	                                 write its figures to FILE (make bench-console)
//
// A step that fails saves a screenshot and the page's DOM under the
// artifacts directory, in a folder named after the test, and names it in
// the failure message; CI keeps that directory.
package console
