package httpapi

// routes lists the whole interface: SPEC part A (1 to 6) and part C (C.1 to
// C.4). Every route answers 401 before anything else when the key is
// missing or unknown; a known path with another method answers 405 with
// Allow, any other path 404 (see register).
func (h *Handler) routes() []route {
	return []route{
		{"POST /v1/integration/prompts", h.createPrompt()},                                        // A.1
		{"GET /v1/integration/prompts", h.listPrompts()},                                          // A.5
		{"GET /v1/integration/prompts/{prompt_id}", h.readPrompt()},                               // A.3, C.4
		{"PATCH /v1/integration/prompts/{prompt_id}", h.updatePrompt()},                           // A.4
		{"POST /v1/integration/prompts/{prompt_id}/versions", h.createVersion()},                  // A.2, C.3
		{"GET /v1/integration/prompts/{prompt_id}/versions", h.listVersions()},                    // C.1
		{"GET /v1/integration/prompts/{prompt_id}/versions/{version_number}", h.readVersion()},    // C.2
		{"PUT /v1/integration/prompts/{prompt_id}/environments/{environment}", h.activate()},      // C.3
		{"DELETE /v1/integration/prompts/{prompt_id}/environments/{environment}", h.deactivate()}, // C.3
		{"GET /v1/integration/projects", h.listProjects()},                                        // A.6
	}
}
