-- 0013: the API keys kept in the Store (prompts.KeyStore): the SHA-256 of
-- each secret, never the secret. A revoked key's row is deleted; its
-- events (key.created, key.revoked, of no project: project_id '') stay.

CREATE TABLE api_keys (
    id           text COLLATE "C" PRIMARY KEY,
    name         text COLLATE "C" NOT NULL UNIQUE,
    role         text NOT NULL CHECK (role IN ('read', 'write', 'deploy', 'admin')),
    project_ids  text[] COLLATE "C", -- NULL: every project
    hash         bytea NOT NULL UNIQUE CHECK (length(hash) = 32),
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz,
    last_used_at timestamptz
);

-- The events of keys: the key in data, without its hash.
ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check CHECK (type IN ('project.created', 'prompt.created', 'prompt.updated',
    'version.created', 'deployment.created', 'key.created', 'key.revoked',
    'environment.created', 'environment.updated', 'environment.deleted')); -- and 0012's

-- A webhook of every type receives the new types too ("those added later
-- included"): the routes of key events, which belong to no project, for
-- the webhooks of every type and every project.
INSERT INTO webhook_routes (event_type, project_id, webhook_id)
SELECT t.type, '', w.id FROM webhooks w, unnest(ARRAY['key.created', 'key.revoked']) AS t(type)
WHERE w.events = '{}' AND w.project_ids IS NULL
ON CONFLICT DO NOTHING;
