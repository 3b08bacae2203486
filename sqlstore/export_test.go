package sqlstore

// MigrateLockKey returns the key of the advisory lock Migrate takes.
func MigrateLockKey(s *Store) int64 { return s.lockKey }

// queryNames names the statements, for the query plans test.
var queryNames = [numQueries]string{
	qCreateProject:              "CreateProject",
	qGetProject:                 "GetProject",
	qListProjects:               "ListProjects",
	qListProjectsByIDs:          "ListProjects (ids)",
	qCreatePrompt:               "CreatePrompt",
	qGetPrompt:                  "GetPrompt",
	qUpdatePrompt:               "UpdatePrompt",
	qListPrompts:                "ListPrompts",
	qListPromptsByProject:       "ListPrompts (one project)",
	qListPromptsByProjects:      "ListPrompts (several projects)",
	qListPromptsByKey:           "ListPrompts (key)",
	qListPromptsByKeyInProjects: "ListPrompts (key in projects)",
	qCreateVersion:              "CreateVersion",
	qLockPrompt:                 "CreateVersion (retry under the lock)",
	qGetVersion:                 "GetVersion",
	qListVersions:               "ListVersions",
	qGetActive:                  "GetActive",
	qGetActiveByKey:             "GetActiveByKey",
	qActivateNumber:             "Activate (number)",
	qActivateID:                 "Activate (id)",
	qDeactivate:                 "Deactivate",
}

// Queries returns the Store's statements by name, in order.
func Queries(s *Store) (names, texts []string) {
	for i := range numQueries {
		names = append(names, queryNames[i])
		texts = append(texts, s.queries[i])
	}
	return names, texts
}
