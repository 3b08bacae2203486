package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// fastGet answers a prompts/get request of an open session itself, and
// reports whether it did; anything else it leaves to the SDK as it came.
//
// It is prompts/get's hot path: the same handler the SDK would call, its
// answer the one JSON message the SDK would write, without the SDK's
// hand-offs between goroutines and its decoding of each message several
// times (with a 32 KiB buffer each, in v1.8.0), which cost ten times the
// render itself. A request it is unsure of (another method, a batch, a
// protocol version it does not know, a prompt not listed, fields beyond
// name and arguments) goes to the SDK, which answers it as it does any.
func (h *Handler) fastGet(w http.ResponseWriter, r *http.Request, v *view, ss *sdk.ServerSession) bool {
	if ss.InitializeParams() == nil || !jsonContent(r) {
		return false
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && (!slices.Contains(sdk.SupportedProtocolVersions(), v) || v >= "2026-07-28") {
		return false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, sdk.DefaultMaxRequestBodyBytes))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
	if err != nil {
		return false
	}
	var msg struct {
		JSONRPC string                     `json:"jsonrpc"`
		ID      json.RawMessage            `json:"id"`
		Method  string                     `json:"method"`
		Params  map[string]json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.JSONRPC != "2.0" || msg.Method != "prompts/get" || !plainID(msg.ID) {
		return false
	}
	var params sdk.GetPromptParams
	for k, raw := range msg.Params {
		switch k {
		case "name":
			if json.Unmarshal(raw, &params.Name) != nil {
				return false
			}
		case "arguments":
			if json.Unmarshal(raw, &params.Arguments) != nil {
				return false
			}
		case "_meta": // a progress token: there is no progress to tell
		default:
			return false
		}
	}
	promptID, ok := v.lookup(params.Name)
	if !ok {
		return false // the SDK's "unknown prompt"
	}
	res, err := v.getPrompt(promptID)(r.Context(), &sdk.GetPromptRequest{Params: &params})
	out := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result,omitempty"`
		Error   *jsonrpc.Error  `json:"error,omitempty"`
	}{JSONRPC: "2.0", ID: msg.ID, Result: res}
	if err != nil {
		out.Result = nil
		if !errors.As(err, &out.Error) {
			out.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		h.log.Error("mcp: cannot encode a prompts/get answer", "err", err)
		b = []byte(`{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"error":{"code":-32603,"message":"the server failed to encode the answer"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
	return true
}

// jsonContent reports whether r's body is JSON and its client takes the
// answers of the transport, by the SDK's rule for every POST: Accept
// names both application/json and text/event-stream (or application/*,
// text/*, */*). A request that fails it goes to the SDK, which refuses it
// (400) as it refuses any other method's.
func jsonContent(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct != "application/json" && !strings.HasPrefix(ct, "application/json;") {
		return false
	}
	var jsonOK, streamOK bool
	for _, v := range r.Header.Values("Accept") {
		for raw := range strings.SplitSeq(v, ",") {
			base, _, _ := strings.Cut(raw, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}

// plainID reports whether raw is a JSON-RPC request id: a string or an
// integer.
func plainID(raw json.RawMessage) bool {
	var id any
	if json.Unmarshal(raw, &id) != nil {
		return false
	}
	switch v := id.(type) {
	case string:
		return true
	case float64:
		return v == float64(int64(v))
	}
	return false
}
