package api_test

import (
	"strings"
	"testing"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// BenchmarkAppendActive encodes read 3's body, 1.1 KB, with the hand
// encoder, as the server does when its answer is not cached yet: the
// conversion and the JSON. BenchmarkMarshalActive is the same body by
// the library, the baseline that keeps the hand encoder (BENCHMARKS.md,
// "The JSON of read 3").
func BenchmarkAppendActive(b *testing.B) { benchActive(b, 1, appendActive) }

// BenchmarkAppendActiveLarge encodes a 40 KB body, beyond what the
// server keeps of encoded answers: what each such read costs.
func BenchmarkAppendActiveLarge(b *testing.B) { benchActive(b, 50, appendActive) }

// BenchmarkMarshalActive is BenchmarkAppendActive by api.Append.
func BenchmarkMarshalActive(b *testing.B) { benchActive(b, 1, marshalActive) }

// BenchmarkMarshalActiveLarge is BenchmarkAppendActiveLarge by api.Append.
func BenchmarkMarshalActiveLarge(b *testing.B) { benchActive(b, 50, marshalActive) }

func appendActive(buf []byte, a prompts.ActivePrompt) ([]byte, error) {
	return api.AppendActive(buf, a), nil
}

func marshalActive(buf []byte, a prompts.ActivePrompt) ([]byte, error) {
	return api.Append(buf, api.FromActive(a))
}

func benchActive(b *testing.B, times int, encode func([]byte, prompts.ActivePrompt) ([]byte, error)) {
	a := sample()
	a.ActiveVersion.Content = strings.Repeat(a.ActiveVersion.Content, times)
	buf := make([]byte, 0, 64<<10)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = encode(buf[:0], a); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}
