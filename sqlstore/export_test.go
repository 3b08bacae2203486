package sqlstore

import "context"

// MigrateLockKey returns the key of the advisory lock Migrate takes.
func MigrateLockKey(s *Store) int64 { return s.lockKey }

// EventLockKey returns the key of the advisory lock of the event log of
// the Store in schema.
func EventLockKey(schema string) int64 { return eventLockKey(schema) }

// queryNames names the statements, for the query plans test.
var queryNames = [numQueries]string{
	qCreateProject:                "CreateProject",
	qGetProject:                   "GetProject",
	qListProjects:                 "ListProjects",
	qListProjectsByIDs:            "ListProjects (ids)",
	qCreatePrompt:                 "CreatePrompt",
	qGetPrompt:                    "GetPrompt",
	qUpdatePrompt:                 "UpdatePrompt",
	qListPrompts:                  "ListPrompts",
	qListPromptsByProject:         "ListPrompts (one project)",
	qListPromptsByProjects:        "ListPrompts (several projects)",
	qListPromptsByKey:             "ListPrompts (key)",
	qListPromptsByKeyInProjects:   "ListPrompts (key in projects)",
	qCreateVersion:                "CreateVersion",
	qLockPrompt:                   "CreateVersion (retry under the lock)",
	qGetVersion:                   "GetVersion",
	qListVersions:                 "ListVersions",
	qGetActive:                    "GetActive",
	qGetActiveByKey:               "GetActiveByKey",
	qLockEnvironments:             "Activate, Deactivate (lock)",
	qPointEnvironment:             "Activate (point)",
	qClearEnvironment:             "Deactivate (clear)",
	qRollbackTarget:               "Rollback (target)",
	qLockPartials:                 "CreateVersion, Rollback (partials' locks)",
	qMissingPartials:              "Activate, Rollback, CreateVersion (partials guard)",
	qListDeployments:              "ListDeployments",
	qListDeploymentsByEnvironment: "ListDeployments (one environment)",
	qClaimIdempotency:             "Idempotency (claim)",
	qGetIdempotency:               "Idempotency (replay)",
	qSaveIdempotency:              "Idempotency (save)",
	qExpireIdempotency:            "Idempotency (expire)",
	qAppendEvents:                 "Events (append, at a transaction's end)",
	qListEvents:                   "ListEvents",
	qListEventsByProjects:         "ListEvents (projects)",
	qLastEventID:                  "LastEventID",
	qCreateWebhook:                "CreateWebhook",
	qGetWebhook:                   "GetWebhook",
	qListWebhooks:                 "ListWebhooks",
	qDeleteWebhook:                "DeleteWebhook",
	qListDeliveryAttempts:         "ListDeliveryAttempts",
	qClaimDeliveries:              "ClaimDeliveries",
	qFinishDelivery:               "FinishDelivery",
	qListEnvironments:             "ListEnvironments",
	qPutEnvironment:               "PutEnvironment",
	qSetEnvironment:               "PutEnvironment (protection)",
	qEnvironmentOfPrompt:          "GetActive (environment)",
	qEnvironmentOfProject:         "GetActiveByKey (environment)",
	qLockEnvironment:              "PutEnvironment, DeleteEnvironment (lock)",
	qEnvironmentInUse:             "DeleteEnvironment (in use)",
	qDeleteEnvironment:            "DeleteEnvironment",
	qSplitVersions:                "GetActive, GetActiveByKey (a split's versions)",
	qResolveVersions:              "Activate, Rollback (a split's versions)",
	qEnvironmentState:             "Activate, Rollback, CreateVersion (to or from a split: the state)",
	qHoldEnvironment:              "Activate, Rollback, CreateVersion (to or from a split: hold)",
}

// Queries returns the Store's statements by name, in order.
func Queries(s *Store) (names, texts []string) {
	for i := range numQueries {
		names = append(names, queryNames[i])
		texts = append(texts, s.queries[i])
	}
	return names, texts
}

// MigrateTo applies the migrations up to and including the one numbered
// last, as Migrate would, for tests of an upgrade.
func MigrateTo(ctx context.Context, s *Store, last int) error {
	all, err := migrations()
	if err != nil {
		return err
	}
	for _, m := range all {
		if m.version > last {
			break
		}
		if err := s.migrate(ctx, m); err != nil {
			return err
		}
	}
	return nil
}
