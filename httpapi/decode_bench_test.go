package httpapi

import (
	"strings"
	"testing"

	"github.com/promptkit/prompts/api"
)

// BenchmarkDecodeCreateVersion measures the decoding of a typical create
// version body (a 700-byte content, a change summary, metadata and an
// environment): every check of the body's syntax and members.
func BenchmarkDecodeCreateVersion(b *testing.B) {
	body := []byte(`{"content":"You are the support assistant of {{company}}. Greet {{customer_name}} by name, ` +
		strings.Repeat(`warmly and briefly, in the language of their last message. `, 10) +
		`Sign off with the name {{agent_name}}.","change_summary":"Shorter greeting, \"warmer\" tone",` +
		`"metadata_":{"model":"gpt-5","temperature":0.2,"max_tokens":512,"tags":["support","greeting"],"owner":{"team":"support","oncall":"ada"}},` +
		`"environments":["staging"]}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var req api.NewVersion
		if bad := api.DecodeRequest(body, &req); bad != nil {
			b.Fatal(bad.Detail)
		}
	}
}
