package api

import (
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/promptkit/prompts"
)

// Share is one entry of a split as the answers have it: the version (its
// id and its number) and its weight. A split is an array of them, in the
// order whose shares of [0, 1) the entries own (prompts.Split): the
// "split" of a read of a prompt in an environment that holds one, and
// the "split" and "previous_split" of a deployment record.
type Share struct {
	VersionID     string `json:"version_id"`
	VersionNumber int    `json:"version_number"`
	Weight        int    `json:"weight"`
}

// FromSplit returns the JSON form of s: nil for nil.
func FromSplit(s prompts.Split) []Share {
	if s == nil {
		return nil
	}
	out := make([]Share, len(s))
	for i, e := range s {
		out[i] = Share{VersionID: e.VersionID, VersionNumber: e.VersionNumber, Weight: e.Weight}
	}
	return out
}

// DomainSplit returns s as package prompts has it: nil for nil.
func DomainSplit(s []Share) prompts.Split {
	if s == nil {
		return nil
	}
	out := make(prompts.Split, len(s))
	for i, e := range s {
		out[i] = prompts.Share{VersionID: e.VersionID, VersionNumber: e.VersionNumber, Weight: e.Weight}
	}
	return out
}

// appendSplit appends the JSON of FromSplit(s), as Marshal writes it.
func appendSplit(b []byte, s prompts.Split) []byte {
	b = append(b, '[')
	for i, e := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"version_id":`...)
		b = appendString(b, e.VersionID)
		b = append(b, `,"version_number":`...)
		b = strconv.AppendInt(b, int64(e.VersionNumber), 10)
		b = append(b, `,"weight":`...)
		b = strconv.AppendInt(b, int64(e.Weight), 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

// ShareRequest is one entry of the split of an activation's body: its
// version by version_id or by version_number (one of the two), and its
// weight.
type ShareRequest struct {
	VersionID     string `json:"version_id,omitzero"`
	VersionNumber int    `json:"version_number,omitzero"`
	Weight        int    `json:"weight"`
}

// SplitRequest is the split of an activation's body (PUT
// /prompts/{prompt_id}/environments/{environment}): an array of entries
// {"version_id" or "version_number", "weight"}. Decoding it names what is
// wrong by its path ([1].weight, relative to the member that holds it):
// an entry that is not an object, a member it does not know, a value of
// the wrong type, a version_number given as 0 (which prompts.Share could
// not tell from none). The rules of a split (2 to 10 entries, weights 1 to
// 10000, each version once) are prompts.Activation's to judge. Null is
// no split.
type SplitRequest []ShareRequest

// FromSplitRequest returns the body's split for s: each entry naming its
// version by id when it has one, else by number. Nil for nil.
func FromSplitRequest(s prompts.Split) SplitRequest {
	if s == nil {
		return nil
	}
	out := make(SplitRequest, len(s))
	for i, e := range s {
		out[i] = ShareRequest{VersionID: e.VersionID, Weight: e.Weight}
		if e.VersionID == "" {
			out[i].VersionNumber = e.VersionNumber
		}
	}
	return out
}

// Domain returns s as package prompts has it: nil for nil.
func (s SplitRequest) Domain() prompts.Split {
	if s == nil {
		return nil
	}
	out := make(prompts.Split, len(s))
	for i, e := range s {
		out[i] = prompts.Share{VersionID: e.VersionID, VersionNumber: e.VersionNumber, Weight: e.Weight}
	}
	return out
}

const splitShape = `an array of entries {"version_number" or "version_id", "weight"}`

// UnmarshalJSON reads an array of entries; null leaves s nil.
func (s *SplitRequest) UnmarshalJSON(b []byte) error {
	*s = nil
	v := jsontext.Value(b)
	if v.Kind() == 'n' {
		return nil
	}
	var items []jsontext.Value
	if v.Kind() != '[' || json.Unmarshal(v, &items) != nil {
		return fieldsError{{Detail: "must be " + splitShape + " or null"}}
	}
	var fe fieldsError
	out := make(SplitRequest, len(items))
	for i, item := range items {
		out[i] = readShare(item, "["+strconv.Itoa(i)+"]", &fe)
	}
	if len(fe) > 0 {
		return fe
	}
	*s = out
	return nil
}

// readShare reads the entry v of a split at path.
func readShare(v jsontext.Value, path string, fe *fieldsError) ShareRequest {
	m := members(v, path, `an object {"version_number" or "version_id", "weight"}`, []string{"version_id", "version_number", "weight"}, fe)
	if m == nil {
		return ShareRequest{}
	}
	var out ShareRequest
	if id, ok := m["version_id"]; ok && id.Kind() != 'n' {
		if id.Kind() != '"' || json.Unmarshal(id, &out.VersionID) != nil {
			fe.add(path+".version_id", "must be a string or null")
		}
	}
	if n, ok := m["version_number"]; ok && n.Kind() != 'n' {
		var vn VersionNumber
		switch {
		case vn.UnmarshalJSON(n) != nil:
			fe.add(path+".version_number", "must be an integer or null")
		case vn.Value == 0:
			// Given, so not "no version number" (prompts.Share's 0): a
			// number out of range, as the domain names a negative one.
			fe.add(path+".version_number", "must be 1 to 2147483647")
		}
		out.VersionNumber = vn.Value
	}
	if w, ok := m["weight"]; ok {
		var wn VersionNumber // an integer; one too large for an int reads as the largest
		if w.Kind() == 'n' || wn.UnmarshalJSON(w) != nil {
			fe.add(path+".weight", "must be an integer from 1 to 10000")
		}
		out.Weight = wn.Value
	}
	return out
}
