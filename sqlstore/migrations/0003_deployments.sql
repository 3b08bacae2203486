-- 0003: the history of what each environment of a prompt pointed at.
--
-- One row per change (prompts.Deployment); rows never change. Ids are
-- ULIDs that grow with time within a prompt: prompts.latest_deployment_id
-- holds the newest, read under the prompt's row lock to make the next.
-- The version ids of a record come from versions, which never change.

CREATE TABLE deployments (
    prompt_id               text COLLATE "C" NOT NULL,
    id                      text COLLATE "C" NOT NULL,
    environment             text COLLATE "C" NOT NULL CHECK (environment IN ('production', 'staging')),
    action                  text NOT NULL CHECK (action IN ('activate', 'deactivate', 'rollback')),
    version_number          integer,
    previous_version_number integer,
    actor                   text,
    reason                  text,
    created_at              timestamptz NOT NULL,
    -- the history pages by id, newest first
    CONSTRAINT deployments_pkey PRIMARY KEY (prompt_id, id),
    CONSTRAINT deployments_version_fkey FOREIGN KEY (prompt_id, version_number)
        REFERENCES versions (prompt_id, version_number),
    CONSTRAINT deployments_previous_version_fkey FOREIGN KEY (prompt_id, previous_version_number)
        REFERENCES versions (prompt_id, version_number)
);

-- One environment's history, and its latest record (what a rollback
-- undoes).
CREATE INDEX deployments_prompt_id_environment_id_idx ON deployments (prompt_id, environment, id);

ALTER TABLE prompts ADD COLUMN latest_deployment_id text COLLATE "C";
