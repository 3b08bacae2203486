-- 0008: the API keys a server generates for itself when it is given none
-- (cmd/promptsd): their name and SHA-256 only, never the secret, so that
-- every replica on the database accepts the key printed at the first
-- start, and no key is kept in a file beside the server.

CREATE TABLE server_keys (
    name       text COLLATE "C" PRIMARY KEY,
    hash       text COLLATE "C" NOT NULL,
    created_at timestamptz NOT NULL
);
