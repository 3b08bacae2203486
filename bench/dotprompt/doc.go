// Package dotpromptbench measures and checks this project's Dotprompt
// renderer against Google's Go port of Dotprompt
// (github.com/google/dotprompt/go), through the public API users run:
// prompts.ParseTemplate on a dotprompt version, then Template.Render.
//
// It is a module of its own so that the main module does not depend on
// Google's. Its tests are the work:
//
//   - BenchmarkSuite renders every template of Dotprompt's specification
//     suite (vendored in internal/dotprompt/testdata/spec) with both, each
//     template parsed or compiled once and rendered many times;
//   - TestDifferential renders a few hundred random templates, built from
//     a grammar of Dotprompt's constructs with random data, with both and
//     compares the messages; README.md lists where Google's port departs
//     from the specification and why.
package dotpromptbench
