-- 0001: projects, prompts, their versions, and what is active where.
--
-- Migrate runs this with search_path set to the store's schema, so names
-- here are unqualified. Identifiers (ULIDs), keys and slugs use the "C"
-- collation: byte order, which is the order of ULIDs and of Go strings,
-- whatever the database's locale.

CREATE TABLE projects (
    id          text COLLATE "C" NOT NULL,
    name        text NOT NULL,
    slug        text COLLATE "C" NOT NULL,
    description text NOT NULL,
    is_private  boolean NOT NULL,
    created_at  timestamptz NOT NULL,
    CONSTRAINT projects_pkey PRIMARY KEY (id),
    CONSTRAINT projects_slug_key UNIQUE (slug)
);

-- version_count is the number of the newest version, and the row lock taken
-- by incrementing it serializes the writers of one prompt's versions.
CREATE TABLE prompts (
    id                text COLLATE "C" NOT NULL,
    project_id        text COLLATE "C" NOT NULL,
    key               text COLLATE "C" NOT NULL,
    name              text NOT NULL,
    description       text,
    latest_version_id text COLLATE "C",
    version_count     integer NOT NULL DEFAULT 0 CHECK (version_count >= 0),
    created_at        timestamptz NOT NULL,
    CONSTRAINT prompts_pkey PRIMARY KEY (id),
    CONSTRAINT prompts_project_id_fkey FOREIGN KEY (project_id) REFERENCES projects (id),
    -- a prompt's key is unique within its project (case-sensitive)
    CONSTRAINT prompts_project_key_key UNIQUE (project_id, key)
);

-- The list of a project's prompts, and of the prompts with one key, in id
-- order: index scans that start at the page's position.
CREATE INDEX prompts_project_id_id_idx ON prompts (project_id, id);
CREATE INDEX prompts_key_id_idx ON prompts (key, id);

-- metadata is json, not jsonb: json keeps the text as given (every digit of
-- every number), jsonb would rewrite it.
CREATE TABLE versions (
    prompt_id      text COLLATE "C" NOT NULL,
    version_number integer NOT NULL CHECK (version_number > 0),
    id             text COLLATE "C" NOT NULL,
    content        text NOT NULL,
    change_summary text,
    metadata       json,
    created_at     timestamptz NOT NULL,
    CONSTRAINT versions_pkey PRIMARY KEY (prompt_id, version_number),
    -- the version list pages by id, newest first
    CONSTRAINT versions_prompt_id_id_key UNIQUE (prompt_id, id),
    CONSTRAINT versions_prompt_id_fkey FOREIGN KEY (prompt_id) REFERENCES prompts (id)
);

-- One row per prompt and environment that has an active version.
CREATE TABLE deployments (
    prompt_id      text COLLATE "C" NOT NULL,
    environment    text COLLATE "C" NOT NULL CHECK (environment IN ('production', 'staging')),
    version_number integer NOT NULL,
    updated_at     timestamptz NOT NULL,
    CONSTRAINT deployments_pkey PRIMARY KEY (prompt_id, environment),
    CONSTRAINT deployments_version_fkey FOREIGN KEY (prompt_id, version_number)
        REFERENCES versions (prompt_id, version_number)
);
