package mcp

// Following reports whether the handler follows the event log now.
func (h *Handler) Following() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.tail != nil
}

// Revoked reports whether the handler has read the revocation of the
// kept key id.
func (h *Handler) Revoked(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.revoked[id]
	return ok
}
