package mcp

// Following reports whether the handler follows the event log now.
func (h *Handler) Following() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.tail != nil
}
