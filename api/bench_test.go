package api_test

import (
	"strings"
	"testing"

	"github.com/promptkit/prompts/api"
)

// BenchmarkAppendActive encodes read 3's body, 1.1 KB, as the server
// does when its answer is not cached yet: the conversion and the JSON.
func BenchmarkAppendActive(b *testing.B) {
	benchAppendActive(b, 1)
}

// BenchmarkAppendActiveLarge encodes a 40 KB body, beyond what the
// server keeps of encoded answers: what each such read costs.
func BenchmarkAppendActiveLarge(b *testing.B) {
	benchAppendActive(b, 50)
}

func benchAppendActive(b *testing.B, times int) {
	a := sample()
	a.ActiveVersion.Content = strings.Repeat(a.ActiveVersion.Content, times)
	buf := make([]byte, 0, 64<<10)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = api.Append(buf[:0], api.FromActive(a)); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}
