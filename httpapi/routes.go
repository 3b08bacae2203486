package httpapi

// routes lists the whole interface, with the role each route needs; each
// handler is named after its operationId in openapi.yaml. Every route
// answers 401 before anything else when the key is missing or unknown; a
// known path with another method answers 405 with Allow, any other path
// 404 (see register); then a key whose role is below the route's is 403.
func (h *Handler) routes() []route {
	return []route{
		{"POST /v1/integration/prompts", RoleWrite, h.createPrompt()},
		{"GET /v1/integration/prompts", RoleRead, h.listPrompts()},
		{"GET /v1/integration/prompts/{prompt_id}", RoleRead, h.readPrompt()},
		{"PATCH /v1/integration/prompts/{prompt_id}", RoleWrite, h.updatePrompt()},
		// A version created active in environments needs RoleDeploy too:
		// createVersion checks that after the field rules.
		{"POST /v1/integration/prompts/{prompt_id}/versions", RoleWrite, h.createVersion()},
		{"GET /v1/integration/prompts/{prompt_id}/versions", RoleRead, h.listVersions()},
		{"GET /v1/integration/prompts/{prompt_id}/versions/{version_number}", RoleRead, h.readVersion()},
		{"PUT /v1/integration/prompts/{prompt_id}/environments/{environment}", RoleDeploy, h.activate()},
		{"DELETE /v1/integration/prompts/{prompt_id}/environments/{environment}", RoleDeploy, h.deactivate()},
		{"GET /v1/integration/prompts/{prompt_id}/environments/{environment}", RoleRead, h.readEnvironment()},
		{"POST /v1/integration/prompts/{prompt_id}/environments/{environment}/rollback", RoleDeploy, h.rollback()},
		{"GET /v1/integration/prompts/{prompt_id}/deployments", RoleRead, h.listDeployments()},
		{"POST /v1/integration/prompts/{prompt_id}/render", RoleRead, h.render()},
		{"GET /v1/integration/projects/{project_id}/prompts/{key...}", RoleRead, h.readByKey()},
		{"GET /v1/integration/projects", RoleRead, h.listProjects()},
	}
}
