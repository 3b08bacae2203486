// Package browsertest tests the web interface (package ui) as people use
// it: the standalone server, cmd/promptsd, runs as a real process, and a
// real headless Chromium signs in, follows links, fills in forms and
// submits them, once with scripts on and once with scripts off. Every
// change the interface makes is checked through the HTTP interface
// (/v1/integration), not through the interface itself.
//
// Elements are found as a screen reader finds them: by their role and
// accessible name (the link "Promote", the field "Reason", the button
// "Create"), through the browser's accessibility tree. Every page visited
// is also checked for what the interface promises: no violation of
// impact serious or critical of axe-core's WCAG 2.1 A and AA rules, no
// sideways scrolling at 375 px wide, at most 30 KiB of scripts, nothing
// loaded from another origin, no script error and no refusal by the
// page's own Content-Security-Policy.
//
// The package has tests only. They need Chromium and axe-core:
//
//	apt-get install chromium        # or set PROMPTS_TEST_CHROMIUM to a Chrome or Chromium binary
//	(cd ui/browsertest && npm ci)   # axe-core, at the version package-lock.json pins
//	go test ./ui/browsertest
//
// Without either, the tests skip and say which is missing;
// PROMPTS_TEST_REQUIRE_BROWSER=1 (set in CI) makes that a failure.
// PROMPTS_UPDATE_SCREENSHOTS=1 saves the screenshots that docs/ui.md
// shows into docs/screenshots.
package browsertest
