package wire

import (
	"bytes"
	"encoding/json"
)

// JSON encodes v as encoding/json does, but leaves <, > and & (and
// U+2028, U+2029) as they are: json.Marshal escapes them even inside the
// raw text a Marshaler returns, and a version's metadata is raw text that
// must come back byte for byte from what a Store keeps (a journal record,
// an idempotency record).
func JSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
