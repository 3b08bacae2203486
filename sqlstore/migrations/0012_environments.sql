-- 0012: a project's environments. production and staging exist in every
-- project without a row: a row of theirs, made when one is first
-- protected, holds their protection (its created_at is the project's).
-- Every other environment has its row, from its creation to its removal.
-- The checks that allowed production and staging only go: the Store
-- checks names against this table, in the transaction that uses them.
-- A change of what an environment points at reads its row FOR SHARE, and
-- a removal takes it FOR UPDATE before it checks that nothing is active
-- there: the two take turns, so that nothing is ever active in a removed
-- environment.

CREATE TABLE project_environments (
    project_id text COLLATE "C" NOT NULL,
    name       text COLLATE "C" NOT NULL CHECK (name ~ '^[a-z][a-z0-9-]{0,31}$'),
    protected  boolean NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT project_environments_pkey PRIMARY KEY (project_id, name),
    CONSTRAINT project_environments_project_fkey FOREIGN KEY (project_id) REFERENCES projects (id)
);

ALTER TABLE environments DROP CONSTRAINT environments_environment_check;
ALTER TABLE deployments DROP CONSTRAINT deployments_environment_check;

-- The events of a project's environments: added, protection changed,
-- removed (data holds the environment, as a prompt's events hold the
-- prompt). The check names every type, the keys' of 0013 included, and
-- 0013 names these, so that either order of the two leaves every type.
ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check CHECK (type IN ('project.created', 'prompt.created', 'prompt.updated',
    'version.created', 'deployment.created', 'key.created', 'key.revoked',
    'environment.created', 'environment.updated', 'environment.deleted'));

-- A webhook of every type receives the new types too: routes of the
-- environments' events, for each of its projects ('' for every project).
INSERT INTO webhook_routes (event_type, project_id, webhook_id)
SELECT t.type, p.project_id, w.id
FROM webhooks w
CROSS JOIN unnest(ARRAY['environment.created', 'environment.updated', 'environment.deleted']) AS t(type)
CROSS JOIN LATERAL unnest(COALESCE(w.project_ids, ARRAY['']::text[])) AS p(project_id)
WHERE w.events = '{}'
ON CONFLICT DO NOTHING;
