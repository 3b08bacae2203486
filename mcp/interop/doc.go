// Package interop tests package mcp against an MCP client written by
// others: the official TypeScript SDK's (@modelcontextprotocol/sdk, at
// the version package-lock.json pins), driven by client.mjs. The
// standalone server, cmd/promptsd, runs as a real process in memory; the
// client reaches it over Streamable HTTP at /mcp, and over stdio through
// `prompts mcp` (cmd/prompts), which it starts itself. Both commands are
// built by the test, with the race detector when the test has it.
//
// The package has tests only. They need Node.js (20 or later) and the
// SDK:
//
//	(cd mcp/interop && npm ci)   # the SDK, at the version package-lock.json pins
//	go test ./mcp/interop
//
// Without either, the tests skip and say which is missing;
// PROMPTS_TEST_REQUIRE_NODE=1 (set in CI) makes that a failure.
// PROMPTS_TEST_NODE names a node binary other than the one on PATH.
package interop
