package client

import "github.com/promptkit/prompts/cache"

// ParseSnapshot reads a project's snapshot, as GET
// /v1/integration/projects/{project_id}/snapshot answers it and `prompts
// snapshot` writes it, for cache.WithFallback: an application embeds the
// file (go:embed) and starts and serves even when the server cannot be
// reached. It is cache.ParseSnapshot.
func ParseSnapshot(data []byte) (*cache.Snapshot, error) { return cache.ParseSnapshot(data) }
