package httpapi

// routes lists the whole interface; each handler is named after its
// operationId in openapi.yaml. Every route answers 401 before anything
// else when the key is missing or unknown; a known path with another
// method answers 405 with Allow, any other path 404 (see register).
func (h *Handler) routes() []route {
	return []route{
		{"POST /v1/integration/prompts", h.createPrompt()},
		{"GET /v1/integration/prompts", h.listPrompts()},
		{"GET /v1/integration/prompts/{prompt_id}", h.readPrompt()},
		{"PATCH /v1/integration/prompts/{prompt_id}", h.updatePrompt()},
		{"POST /v1/integration/prompts/{prompt_id}/versions", h.createVersion()},
		{"GET /v1/integration/prompts/{prompt_id}/versions", h.listVersions()},
		{"GET /v1/integration/prompts/{prompt_id}/versions/{version_number}", h.readVersion()},
		{"PUT /v1/integration/prompts/{prompt_id}/environments/{environment}", h.activate()},
		{"DELETE /v1/integration/prompts/{prompt_id}/environments/{environment}", h.deactivate()},
		{"GET /v1/integration/prompts/{prompt_id}/environments/{environment}", h.readEnvironment()},
		{"POST /v1/integration/prompts/{prompt_id}/environments/{environment}/rollback", h.rollback()},
		{"GET /v1/integration/prompts/{prompt_id}/deployments", h.listDeployments()},
		{"GET /v1/integration/projects/{project_id}/prompts/{key...}", h.readByKey()},
		{"GET /v1/integration/projects", h.listProjects()},
	}
}
