-- 0007: the event log (prompts.EventLog), the webhooks and their outbox
-- (prompts.WebhookStore).
--
-- Event ids come from event_ids, taken by each write at the end of its
-- transaction under a transaction-level advisory lock that is released at
-- the commit: the writes take their ids in the order in which they commit
-- (see the package doc). CACHE 1, the default, is needed: a session that
-- cached ids would hand them out in another order.
CREATE SEQUENCE event_ids AS bigint CACHE 1;

-- One row per event. A prompt's events hold the prompt as it was right
-- after the change (data, as prompts.Prompt marshals with encoding/json);
-- the other events name what they report, which never changes: the
-- project (project_id), the version (prompt_id, version_number) or the
-- deployment record (prompt_id, deployment_id).
CREATE TABLE events (
    id             bigint PRIMARY KEY CHECK (id > 0),
    type           text NOT NULL CHECK (type IN ('project.created', 'prompt.created', 'prompt.updated', 'version.created', 'deployment.created')),
    project_id     text COLLATE "C" NOT NULL,
    prompt_id      text COLLATE "C",
    created_at     timestamptz NOT NULL,
    data           json,
    version_number integer,
    deployment_id  text COLLATE "C"
);

-- The events of some projects, in id order.
CREATE INDEX events_project_id_id_idx ON events (project_id, id);

CREATE TABLE webhooks (
    id          text COLLATE "C" PRIMARY KEY,
    url         text NOT NULL,
    events      text[] NOT NULL, -- empty: every type
    project_ids text[] COLLATE "C", -- NULL: every project
    secret      text NOT NULL,
    created_at  timestamptz NOT NULL
);

-- What each webhook subscribes to, one row per event type and project
-- ('' for every project), so that a write finds the webhooks of its events
-- on an index.
CREATE TABLE webhook_routes (
    event_type text NOT NULL,
    project_id text COLLATE "C" NOT NULL,
    webhook_id text COLLATE "C" NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    PRIMARY KEY (event_type, project_id, webhook_id)
);

CREATE INDEX webhook_routes_webhook_id_idx ON webhook_routes (webhook_id);

-- The outbox: one row per event and webhook it matches, queued in the
-- write that appends the event, removed when delivered or failed for good,
-- with its webhook, or with its event when the retention removes it. A
-- delivery is due at next_at, unless a claim leased it until later
-- (leased_until): it is due at GREATEST(next_at, leased_until), which
-- ClaimDeliveries reads on an index.
--
-- Deliveries and attempts name their webhook without a foreign key: a
-- write that queues a delivery to a webhook being deleted must not fail
-- (nor wait for the delete). DeleteWebhook removes them; one queued by
-- such a race is never claimed, and goes with its event.
CREATE TABLE deliveries (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook_id   text COLLATE "C" NOT NULL,
    event_id     bigint NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    attempts     integer NOT NULL DEFAULT 0,
    queued_at    timestamptz NOT NULL,
    next_at      timestamptz NOT NULL,
    leased_until timestamptz,
    UNIQUE (event_id, webhook_id)
);

CREATE INDEX deliveries_due_idx ON deliveries ((GREATEST(next_at, leased_until)), id);
CREATE INDEX deliveries_webhook_id_idx ON deliveries (webhook_id);

-- The attempts of each webhook's deliveries; ids are ULIDs from the
-- Store's clock, removed past the event retention by later attempts.
CREATE TABLE delivery_attempts (
    id          text COLLATE "C" PRIMARY KEY,
    webhook_id  text COLLATE "C" NOT NULL,
    event_id    bigint NOT NULL,
    attempt     integer NOT NULL,
    at          timestamptz NOT NULL,
    status_code integer NOT NULL,
    error       text NOT NULL,
    duration    bigint NOT NULL -- nanoseconds
);

-- A webhook's attempts, newest first.
CREATE INDEX delivery_attempts_webhook_id_id_idx ON delivery_attempts (webhook_id, id);
