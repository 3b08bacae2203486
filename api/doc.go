// Package api is the JSON of the /v1/integration HTTP interface: the
// bodies of its requests and responses, the events of its stream and of
// webhooks, and the project snapshot, each a Go type whose json tags are
// the interface's field names, with conversions to and from the types of
// package prompts.
//
// It is the one place where that JSON is declared. The server (package
// httpapi) decodes requests into these types and encodes its answers from
// them; the Go client (package client), the cache's snapshot and the
// webhook dispatcher use them too. It is public so that a Go program that
// receives the webhooks or reads a snapshot decodes them with the same
// types:
//
//	var e api.Event
//	if err := api.UnmarshalLenient(body, &e); err != nil { ... }
//	ev, err := e.Domain() // a prompts.Event, its resource decoded
//
// The types are plain structs: encoding/json reads and writes them as
// well as github.com/go-json-experiment/json (the API of encoding/json/v2)
// does. Marshal and Unmarshal use the latter with the interface's rules:
// Unmarshal refuses a name given twice in any object, invalid UTF-8, a
// lone UTF-16 surrogate and an unknown member; Marshal writes times as the
// interface does, RFC 3339 in UTC with six fractional digits and a Z
// (2026-11-21T22:19:26.123456Z).
//
// A resource's response shapes differ by endpoint and are distinct types:
// Prompt (create, update, list), ActivePrompt (the read of a prompt in an
// environment: no created_at, its active_version a Version), Version
// (the create's answer) and VersionDetail (with change_summary and
// variables: the list and the read of a version, events, snapshots).
package api
