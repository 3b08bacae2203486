-- 0011: every version keeps the keys of the prompts it includes as
-- partials ({{> KEY}}; prompts.PromptVersion.Partials), computed once when
-- it is stored. The versions stored before this migration include none:
-- a template with a partial was refused then. The default is a constant,
-- so adding the column does not rewrite the table.

ALTER TABLE versions ADD COLUMN partials text[] COLLATE "C" NOT NULL DEFAULT '{}';

-- A deactivation finds the versions that include its prompt's key (to
-- refuse it while one of them is active there): an index on the arrays'
-- elements.
CREATE INDEX versions_partials_idx ON versions USING gin (partials);
